"""herdr adapter: one request per connection, then one answer or a subscription stream.

The client's bytes go to a herdr :class:`ServerConnection` for the observed
protocol version; its decoded request is mirrored into a
:class:`ClientConnection`, which then decodes the server's answer (the
result typed for that method and version) and any stream events. A request
line herdr cannot parse is mirrored as a request with id ``""``, the id of
herdr's ``invalid_request`` answer. A ``pong`` whose ``protocol`` is not the
observed version is a ``version_mismatch`` (``--version 22`` in front of a
herdr that speaks 20).
"""

from __future__ import annotations

from shedproto._errors import LocalProtocolError, RemoteProtocolError
from shedproto.herdr import (
    CLI_ONLY_CODES,
    ClientConnection,
    ClientGone,
    ErrorResponse,
    HerdrErrorCode,
    RawRequest,
    ServerConnection,
    State,
    SuccessResponse,
    release_for,
    request_id_of,
)
from shedproto.herdr import ConnectionClosed as HerdrClosed
from shedproto.herdr.types import NEWEST_PROTOCOL, Request

from ._base import Observer

__all__ = ["HerdrObserver"]

_CODES = frozenset(code.value for code in HerdrErrorCode if code not in CLI_ONLY_CODES)


class HerdrObserver(Observer):
    """Observer of one herdr API connection speaking protocol ``version``."""

    protocol = "herdr"

    def __init__(self, connection: int, *, version: int) -> None:
        super().__init__(connection)
        self.version = version
        # 20 and 21 as their release parses them: with the schema-hidden pane.graphics.stream
        release = release_for(version) if version < NEWEST_PROTOCOL else None
        self.server = ServerConnection(
            protocol=version, request_timeout=float("inf"), release=release
        )
        self.client = ClientConnection(protocol=version)
        self._request_id: str | None = None
        self._version = version
        self._echo_ids: frozenset[str] = frozenset()
        """Ids an ``invalid_request`` answer may carry besides ``""`` (a release's echo)."""
        self._s2c_dead = False

    def _client_bytes(self, data: bytes) -> None:
        if self.server.state is State.ERROR:
            return
        try:
            events = self.server.receive_data(data)
        except RemoteProtocolError as exc:
            index = self._frame("c2s")
            self.report_error("c2s", exc, frame=index)
            if exc.reply_hint is not None:
                self._mirror(RawRequest(id="", method="?"))
                # herdr 0.9.2 and later echo the line's string id (earlier releases: "")
                echoed = request_id_of(data.split(b"\n", 1)[0]) if self._version >= 22 else ""
                self._echo_ids = frozenset({echoed} - {""})
            return
        for event in events:
            if isinstance(event, (HerdrClosed, ClientGone)):
                continue
            self._frame("c2s")
            self._mirror(event)

    def _mirror(self, request: Request | RawRequest) -> None:
        self._request_id = request.id
        try:
            self.client.send(request)
        except LocalProtocolError as exc:
            self.report("illegal_state", "c2s", exc.message)

    def _server_bytes(self, data: bytes) -> None:
        if self._s2c_dead or (not data and self._request_id is None):
            return  # a silent close is herdr's answer to a line it drops
        try:
            events = self.client.receive_data(data)
        except (RemoteProtocolError, LocalProtocolError) as exc:
            self._server_error(exc)
            return
        for event in events:
            if isinstance(event, HerdrClosed):
                continue
            index = self._frame("s2c")
            if isinstance(event, (SuccessResponse, ErrorResponse)):
                self._answer(event, index)
        if self.client.state is State.ERROR:  # a bad line after good ones: its error is held
            try:
                self.client.receive_data(b"")
            except (RemoteProtocolError, LocalProtocolError) as exc:
                self._server_error(exc)

    def _check_version(self, result: object, index: int) -> None:
        """Report a ``pong`` naming another protocol than the observed one."""
        config = getattr(type(result), "__struct_config__", None)
        protocol = getattr(result, "protocol", None)
        if config is None or config.tag != "pong" or not isinstance(protocol, int):
            return
        if protocol != self.version:
            self.report(
                "version_mismatch",
                "s2c",
                f"the server speaks herdr protocol {protocol}; observing protocol "
                f"{self.version} (--version)",
                path="$.result.protocol",
                frame=index,
            )

    def _server_error(self, exc: RemoteProtocolError | LocalProtocolError) -> None:
        self._s2c_dead = True
        index = self._frame("s2c")
        if self._request_id is None:
            self.report("unsolicited_answer", "s2c", "an answer before any request", frame=index)
        else:
            self.report_error("s2c", exc, frame=index)

    def _answer(self, answer: SuccessResponse[object] | ErrorResponse, index: int) -> None:
        if isinstance(answer, SuccessResponse):
            self._check_version(answer.result, index)
        if answer.id != self._request_id and answer.id not in self._echo_ids:
            self.report(
                "unsolicited_answer",
                "s2c",
                f"answer id {answer.id!r} is not the request's id {self._request_id!r}",
                path="$.id",
                frame=index,
            )
        if isinstance(answer, ErrorResponse) and answer.error.code not in _CODES:
            self.report(
                "unknown_error_code",
                "s2c",
                f"error code {answer.error.code!r} is not in herdr's registry",
                path="$.error.code",
                frame=index,
            )

"""herdr adapter: one request per connection, then one answer or a subscription stream.

The client's bytes go to a herdr :class:`ServerConnection` for the observed
protocol version; its decoded request is mirrored into a
:class:`ClientConnection`, which then decodes the server's answer (the
result typed for that method and version) and any stream events. A request
line herdr cannot parse is mirrored as a request with id ``""``, the id of
herdr's ``invalid_request`` answer. A ``pong`` whose ``protocol`` is not the
observed version is a ``version_mismatch`` (``--version 22`` in front of a
herdr that speaks 20).

The usual connection (one whole request line of a method that neither holds
the connection nor streams, one whole answer line, then the closes) takes a
quick path: the request and the answer are decoded with the same decoders
the connection objects use and checked by the same code, but the two
connection objects are not built (a proxy meets a new connection per
request). Anything else (a line in pieces or with company, a decode error,
a subscription, bytes after the answer, an end of stream before it) builds
them, replays what the quick path took through them with its diagnostics
(already reported) discarded, and goes on there: the diagnostics are those
of the connection objects in every case.
"""

from __future__ import annotations

from shedproto._errors import LocalProtocolError, RemoteProtocolError
from shedproto.herdr import (
    CLI_ONLY_CODES,
    HOLDING_METHODS,
    MAX_REQUEST_BYTES,
    RAW_STREAM_METHODS,
    ClientConnection,
    ClientGone,
    ErrorResponse,
    HerdrErrorCode,
    RawRequest,
    ServerConnection,
    State,
    SuccessResponse,
    decode_request,
    decode_response,
    release_for,
    request_id_of,
)
from shedproto.herdr import ConnectionClosed as HerdrClosed
from shedproto.herdr._connection import MAX_ANSWER_BYTES  # the client's own answer cap
from shedproto.herdr.types import NEWEST_PROTOCOL, Request, SubscriptionStartedReply

from ._base import Observer
from ._diagnostic import Direction

__all__ = ["HerdrObserver"]

_CODES = frozenset(code.value for code in HerdrErrorCode if code not in CLI_ONLY_CODES)
_NOT_QUICK = HOLDING_METHODS | RAW_STREAM_METHODS


class HerdrObserver(Observer):
    """Observer of one herdr API connection speaking protocol ``version``."""

    protocol = "herdr"

    def __init__(self, connection: int, *, version: int) -> None:
        super().__init__(connection)
        self.version = version
        self._server: ServerConnection | None = None
        self._client: ClientConnection | None = None
        self._request_id: str | None = None
        self._version = version
        self._echo_ids: frozenset[str] = frozenset()
        """Ids an ``invalid_request`` answer may carry besides ``""`` (a release's echo)."""
        self._s2c_dead = False
        self._quick: list[tuple[Direction, bytes]] | None = []
        """What the quick path took (module docstring); ``None`` once on the connection objects."""
        self._answered = False

    @property
    def server(self) -> ServerConnection:
        """The server-side connection object the client's bytes go to (built when first needed)."""
        self._leave_quick_path()
        assert self._server is not None
        return self._server

    @property
    def client(self) -> ClientConnection:
        """The client-side connection object the server's bytes go to (built when first needed)."""
        self._leave_quick_path()
        assert self._client is not None
        return self._client

    def _client_bytes(self, data: bytes) -> None:
        taken = self._quick
        if taken is not None:
            if taken:
                return  # after a quick request the server ignores the client's bytes
            if self._quick_request(data):
                taken.append(("c2s", data))
                return
            self._leave_quick_path()
        self._client_bytes_full(data)

    def _server_bytes(self, data: bytes) -> None:
        taken = self._quick
        if taken is not None:
            if self._answered and not data:
                taken.append(("s2c", data))  # the close after the answer
                return
            if taken and not self._answered and self._quick_answer(data):
                taken.append(("s2c", data))
                return
            self._leave_quick_path()
        self._server_bytes_full(data)

    def _quick_request(self, data: bytes) -> bool:
        """Take one whole plain request line (True), or leave it to the connection objects."""
        if not (
            data[:1] == b"{"
            and data[-2:] == b"}\n"
            and len(data) <= MAX_REQUEST_BYTES
            and data.isascii()
            and data.count(b"\n") == 1
        ):
            return False
        try:
            request = decode_request(data[:-1], self._version)
        except RemoteProtocolError:
            return False
        if request.__struct_config__.tag in _NOT_QUICK:
            return False
        self._frame("c2s")
        self._request_id = request.id
        return True

    def _quick_answer(self, data: bytes) -> bool:
        """Take one whole answer line that is no acknowledgement (True), or leave it."""
        if not (
            data[:1] == b"{"
            and data[-2:] == b"}\n"
            and len(data) <= MAX_ANSWER_BYTES
            and data.count(b"\n") == 1
        ):
            return False
        try:
            answer = decode_response(data[:-1], self._version)
        except RemoteProtocolError:
            return False
        if isinstance(answer, SuccessResponse) and isinstance(
            answer.result, SubscriptionStartedReply
        ):
            return False
        self._answered = True
        self._answer(answer, self._frame("s2c"))
        return True

    def _leave_quick_path(self) -> None:
        """Build the connection objects and replay what the quick path took, muted."""
        taken = self._quick
        if taken is None:
            return
        self._quick = None
        # 20 and 21 as their release parses them: with the schema-hidden pane.graphics.stream
        release = release_for(self._version) if self._version < NEWEST_PROTOCOL else None
        self._server = ServerConnection(
            protocol=self._version, request_timeout=float("inf"), release=release
        )
        self._client = ClientConnection(protocol=self._version)
        self.frames = {"c2s": 0, "s2c": 0}
        self._request_id = None
        self._answered = False
        reported, self._out = self._out, []
        for direction, data in taken:
            if direction == "c2s":
                self._client_bytes_full(data)
            else:
                self._server_bytes_full(data)
        self._out = reported  # the replay's diagnostics were reported by the quick path

    def _client_bytes_full(self, data: bytes) -> None:
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

    def _server_bytes_full(self, data: bytes) -> None:
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

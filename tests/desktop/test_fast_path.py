"""The one-pass request decoder never answers differently from the general path."""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from shedproto.desktop import (
    CATALOGUE,
    Dialect,
    RequestReceived,
    RequestRejected,
    ServerConnection,
    lookup,
)
from tests._hypothesis import examples

_OPS = sorted(CATALOGUE)
_KEYS = sorted(
    {
        f.encode_name
        for spec in CATALOGUE.values()
        for dialect in Dialect
        if (shape := spec.shape(dialect)) is not None
        for f in msgspec.structs.fields(shape.params)
    }
)
_VALUES = (
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from(["", "x", "sheds", "/tmp", "roost:s/w", "approve", "machine:m", "0" * 12])
    | st.lists(st.sampled_from(["a", 1]), max_size=2)
    | st.dictionaries(st.sampled_from(["kind", "id"]), st.sampled_from(["model", "m"]), max_size=2)
)
_IDS = st.sampled_from(["1", "007", "+5", "x", "", " 1"]) | st.integers(-2, 2) | st.none()


class _NoFastPath:
    def decode(self, line: bytes) -> None:
        return None


def _events(dialect: Dialect, line: bytes, *, test_mode: bool, fast: bool) -> list[Any]:
    conn = ServerConnection(dialect, test_mode=test_mode)
    if not fast:
        conn._fast = _NoFastPath()  # type: ignore[assignment]
    out: list[Any] = []
    for event in conn.receive_data(line + b"\n"):
        if isinstance(event, RequestReceived):
            out.append(("ok", event.id, type(event.id), event.op, event.params, event.shape))
        elif isinstance(event, RequestRejected):
            out.append(("rejected", event.reply))
    return out


@settings(max_examples=examples(400), deadline=None)
@given(
    request_id=_IDS,
    op=st.sampled_from([*_OPS, "nope"]),
    params=st.dictionaries(st.sampled_from([*_KEYS, "extra"]), _VALUES, max_size=4) | _VALUES,
    drop=st.sampled_from(["", "id", "params"]),
    test_mode=st.booleans(),
)
def test_fast_path_agrees_with_the_general_path(
    request_id: Any, op: str, params: Any, drop: str, test_mode: bool
) -> None:
    envelope: dict[str, Any] = {"id": request_id, "op": op, "params": params}
    envelope.pop(drop, None)
    line = msgspec.json.encode(envelope)
    for dialect in Dialect:
        fast = _events(dialect, line, test_mode=test_mode, fast=True)
        slow = _events(dialect, line, test_mode=test_mode, fast=False)
        assert fast == slow


def test_fast_path_takes_well_formed_requests() -> None:
    """The fast path is really used (``raw_params`` is ``None`` only there)."""
    line = b'{"id":"1","op":"ui.navigate","params":{"pane":"sheds"}}\n'
    for dialect in Dialect:
        conn = ServerConnection(dialect, test_mode=True)
        (event,) = conn.receive_data(line)
        assert isinstance(event, RequestReceived)
        assert event.raw_params is None
        assert event.shape is lookup("ui.navigate", dialect)


def test_launch_doors_always_carry_raw_params() -> None:
    line = b'{"id":"1","op":"roost.launch","params":{"machine":"m","kind":"claude"}}\n'
    conn = ServerConnection(Dialect.TAURI, test_mode=True)
    (event,) = conn.receive_data(line)
    assert isinstance(event, RequestReceived)
    assert event.raw_params == {"machine": "m", "kind": "claude"}


_RESPONSE_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2) | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=4), inner, max_size=2)
    ),
    max_leaves=5,
)


def _reading(line: bytes) -> Any:
    from shedproto import RemoteProtocolError
    from shedproto.desktop import _envelope

    try:
        return _envelope.parse_response(line)
    except RemoteProtocolError as exc:
        return (exc.code, str(exc))


def _general_reading(line: bytes) -> Any:
    from shedproto import RemoteProtocolError
    from shedproto.desktop import _envelope

    try:
        return _envelope._parse_response_slowly(line)
    except RemoteProtocolError as exc:
        return (exc.code, str(exc))


@settings(max_examples=examples(300), deadline=None)
@given(
    value=st.fixed_dictionaries(
        {},
        optional={
            "id": _RESPONSE_VALUES,
            "ok": st.booleans() | _RESPONSE_VALUES,
            "result": _RESPONSE_VALUES,
            "error": st.fixed_dictionaries(
                {}, optional={"code": _RESPONSE_VALUES, "message": _RESPONSE_VALUES}
            )
            | _RESPONSE_VALUES,
        },
    )
    | _RESPONSE_VALUES
)
def test_response_fast_path_agrees_with_the_general_reading(value: Any) -> None:
    line = msgspec.json.encode(value)
    assert _reading(line) == _general_reading(line)


def test_null_and_absent_params_agree_with_the_general_path_for_every_op() -> None:
    for op in [*_OPS, "nope"]:
        for line in (
            b'{"id":"1","op":"%s","params":null}' % op.encode(),
            b'{"id":"1","op":"%s"}' % op.encode(),
        ):
            for dialect in Dialect:
                for test_mode in (False, True):
                    fast = _events(dialect, line, test_mode=test_mode, fast=True)
                    slow = _events(dialect, line, test_mode=test_mode, fast=False)
                    assert fast == slow, (dialect, op, line, test_mode)


def test_identify_with_null_params_takes_the_fast_path() -> None:
    """Regression: ``"params":null`` fell through to the general path's second decode."""
    for dialect in Dialect:
        conn = ServerConnection(dialect, test_mode=True)
        (event,) = conn.receive_data(b'{"id":"1","op":"identify","params":null}\n')
        assert isinstance(event, RequestReceived)
        assert event.raw_params is None
        assert event.params == msgspec.convert({}, event.shape.params)

"""herdr's quick observing path says exactly what the connection objects say, for any traffic.

The quick path (:mod:`shedproto.observe._herdr`) skips building the two
connection objects for a plain request and answer; on anything else it
replays into them. Every test here feeds one exchange to an observer that
may take the quick path and to one forced onto the connection objects from
the start, and compares every diagnostic.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shedproto.observe import Diagnostic, Direction, HerdrObserver

Exchange = list[tuple[Direction, bytes]]

PONG_22 = (
    b'{"id":"1","result":{"type":"pong","version":"0.9.5","protocol":22,"capabilities":'
    b'{"live_handoff":false,"detached_server_daemon":false,"health_check":false,'
    b'"ssh_agent_registration":true,"surface_interest":false}}}\n'
)
PONG_20 = b'{"id":"1","result":{"type":"pong","version":"0.7.0","protocol":20}}\n'

REQUESTS = [
    b'{"id":"1","method":"ping","params":{}}\n',
    b'{"id":"1","method":"workspace.list","params":{}}\n',
    b'{"id":"1","method":"events.subscribe","params":{"subscriptions":[]}}\n',
    b'{"id":"1","method":"pane.get","params":{"pane_id":5}}\n',
    b'{"id":"1","method":"nope","params":{}}\n',
    b'{"id":1,"method":"ping","params":{}}\n',
    b'{"id":"1","method":"ping"}\n',
    b'{"id":"1","method":"workspace.create","params":{"label":"\xc3\xa9t\xc3\xa9"}}\n',
    b'{"id":"1","method":"ping","params":{}}\r\n',
    b'  {"id":"1","method":"ping","params":{}}  \n',
    b"not json\n",
    b"\n",
    b'{"id":"1","method":"ping","params":{}}',
    b'{"id":"1","method":"ping","params":{}}\n{"id":"2","method":"ping","params":{}}\n',
]

ANSWERS = [
    PONG_22,
    PONG_20,
    b'{"id":"2","result":{"type":"pong","version":"0.9.5","protocol":22}}\n',
    b'{"id":"1","result":{"type":"workspace_list","workspaces":[]}}\n',
    b'{"id":"1","error":{"code":"not_found","message":"no"}}\n',
    b'{"id":"1","error":{"code":"made_up","message":"no"}}\n',
    b'{"id":"","error":{"code":"invalid_request","message":"bad"}}\n',
    b'{"id":"1","result":{"type":"subscription_started"}}\n',
    b'{"id":"1"}\n',
    b'{"id":"1","result":{"type":"pong","protocol":"x"}}\n',
    b"garbage\n",
    b"\n",
    b'{"id":"1","result":{"type":"pong","version":"0.9.5","protocol":22}}\r\n',
    PONG_22 + PONG_22,
    PONG_22[:40],
]


def pair(version: int = 22) -> tuple[HerdrObserver, HerdrObserver]:
    """An observer free to take the quick path, and one already on the connection objects."""
    quick, full = HerdrObserver(3, version=version), HerdrObserver(3, version=version)
    assert full.server is not None  # builds the connection objects now
    return quick, full


def feed_all(observer: HerdrObserver, exchange: Exchange) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    for direction, data in exchange:
        found += observer.feed(direction, data)
    return found


def test_a_plain_exchange_takes_the_quick_path_and_reports_nothing() -> None:
    quick, full = pair()
    exchange: Exchange = [("c2s", REQUESTS[0]), ("s2c", PONG_22), ("s2c", b""), ("c2s", b"")]
    assert feed_all(quick, exchange) == feed_all(full, exchange) == []
    assert quick._server is None  # no connection object was built


def test_a_quick_answer_with_deviations_then_more_bytes_reports_each_once() -> None:
    """Wrong id and unknown code are reported by the quick path; the replay stays muted."""
    answer = b'{"id":"9","error":{"code":"made_up","message":"no"}}\n'
    exchange: Exchange = [("c2s", REQUESTS[0]), ("s2c", answer), ("s2c", PONG_22)]
    quick, full = pair()
    found = feed_all(quick, exchange)
    assert found == feed_all(full, exchange)
    assert [d.kind for d in found] == ["unsolicited_answer", "unknown_error_code", "illegal_state"]


@pytest.mark.parametrize("version", [20, 22])
def test_a_pong_of_another_protocol_is_a_version_mismatch_either_way(version: int) -> None:
    exchange: Exchange = [("c2s", REQUESTS[0]), ("s2c", PONG_20 if version == 22 else PONG_22)]
    quick, full = pair(version)
    found = feed_all(quick, exchange)
    assert found == feed_all(full, exchange)
    assert [d.kind for d in found] == ["version_mismatch"]


def _split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({cut % (len(data) + 1) for cut in cuts} - {0, len(data)})
    pieces, start = [], 0
    for point in points:
        pieces.append(data[start:point])
        start = point
    pieces.append(data[start:])
    return [piece for piece in pieces if piece] or [data]


@st.composite
def exchanges(draw: st.DrawFn) -> Exchange:
    """A request, some answers, extra client bytes and the two ends of stream, in any order."""
    steps: list[tuple[Direction, bytes]] = []
    if draw(st.booleans()):
        steps.append(("c2s", draw(st.sampled_from(REQUESTS))))
    answers = draw(st.lists(st.sampled_from(ANSWERS), max_size=2))
    steps += [("s2c", answer) for answer in answers]
    if draw(st.booleans()):
        steps.append(("c2s", draw(st.sampled_from([b"more\n", REQUESTS[0]]))))
    order = draw(st.permutations(range(len(steps)))) if draw(st.booleans()) else range(len(steps))
    exchange: Exchange = []
    for index in order:
        direction, data = steps[index]
        cuts = draw(st.lists(st.integers(0, 400), max_size=2))
        exchange += [(direction, piece) for piece in _split(data, cuts)]
    ends: list[tuple[Direction, bytes]] = [("s2c", b""), ("c2s", b"")]
    for end in draw(st.permutations(ends))[: draw(st.integers(0, 2))]:
        exchange.insert(draw(st.integers(0, len(exchange))), end)
    return exchange


@settings(max_examples=400, deadline=None)
@given(exchanges(), st.sampled_from([20, 21, 22]))
def test_quick_and_full_paths_report_the_same_for_any_exchange(
    exchange: Exchange, version: int
) -> None:
    quick, full = pair(version)
    assert feed_all(quick, exchange) == feed_all(full, exchange)

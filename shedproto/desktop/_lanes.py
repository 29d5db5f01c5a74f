"""Agent-lane verbs: the 30 s answer deadline and the 10 s reconnect wait.

The digest's contract for a verb sent down a craze lane (``lane.send``,
``cancel``, ``stop``, ``answer``, ``set``):

* its answer lost with the connection (in flight at a drop, or unanswered
  within :data:`LANE_VERB_DEADLINE`) fails ``outcome_unknown``: it may have
  run, and it is never resent;
* issued while the lane is reconnecting, it waits up to
  :data:`LANE_RECONNECT_WAIT`, then fails ``unavailable``: it was never sent,
  so a retry is safe.

Pure: the time until the lane is back is an input. The texts are the craze
adapter's (charliek/shed ``crates/shed-craze/src/lane.rs:416-431,473-496@7639900``
``LaneShared::connected`` and ``call_on``, ``errors.rs:106,111-113@2cd01ef``
``OUTCOME_UNKNOWN``, ``outcome_unknown``); the app carries them whole. An opencode lane
neither waits nor loses answers: its failures are in ``_opencode.py``.

What the app's lane layer answers before any verb is sent is its own
(charliek/shed ``desktop/tauri/src-tauri/src/lane.rs@9a84ddf``, the version whose
lanes are keyed by ``(machine, kind, session_id)`` as ipc.rs:69-75@2cd01ef
``lane_target`` addresses them): :func:`no_lane_stamp` and :func:`no_open_lane` (``no_lane``),
:func:`unsupported_lane` (``unsupported_lane``, the kinds :data:`LANE_KINDS`), and
the verb payload readers :func:`parse_send_mode`, :func:`parse_lane_answer` and
:func:`parse_lane_setting` (``bad_request``). ``lane.set``'s change is read by
serde in the app; the tail after the app's own prefix is serde's usual wording,
modelled here, not read.
"""

from __future__ import annotations

from typing import Any

from ._codes import DesktopCode
from ._errors import DesktopError
from ._opencode import OPENCODE_LANE
from ._rules import json_word, rust_debug

__all__ = [
    "CRAZE_LANE",
    "LANE_KINDS",
    "LANE_RECONNECT_WAIT",
    "LANE_VERBS",
    "LANE_VERB_DEADLINE",
    "lane_answer_lost",
    "lane_error",
    "lane_verb_wait",
    "no_lane_stamp",
    "no_open_lane",
    "parse_lane_answer",
    "parse_lane_setting",
    "parse_send_mode",
    "unsupported_lane",
]

LANE_VERB_DEADLINE = 30.0
"""Seconds a lane verb's answer may take before it counts as lost (``outcome_unknown``)."""
LANE_RECONNECT_WAIT = 10.0
"""Seconds a verb issued on a reconnecting lane waits before failing ``unavailable``."""
LANE_VERBS = frozenset({"lane.send", "lane.cancel", "lane.stop", "lane.answer", "lane.set"})
"""The ops that send a verb down the lane (the reads answer from the app's own state)."""


_VERB_NOUNS = {
    "lane.send": "prompt",
    "lane.cancel": "cancel",
    "lane.stop": "stop",
    "lane.answer": "answer",
    "lane.set": "set",
}
"""The word each craze ``AgentLane`` method names its verb by (``command``/``connected``)."""


def rust_duration(seconds: float) -> str:
    """Render ``seconds`` as Rust's ``Duration`` ``Debug`` does (``10s``, ``2.5s``, ``250ms``)."""
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "\u00b5s")):
        if seconds >= scale:
            return f"{seconds / scale:.9f}".rstrip("0").rstrip(".") + unit
    return f"{round(seconds * 1e9)}ns"


def lane_verb_wait(
    verb: str, reconnect_in: float | None, *, wait: float = LANE_RECONNECT_WAIT
) -> float:
    """Return how long ``verb`` waits before it is sent (``0`` on a live lane).

    ``reconnect_in`` is ``None`` for a live lane, else the seconds until the
    lane is back (``math.inf``: not coming back).

    Raises:
        DesktopError: ``unavailable`` when the lane will not be back within
            ``wait`` seconds; nothing was sent.

    """
    if reconnect_in is None or reconnect_in <= 0:
        return 0.0
    if reconnect_in > wait:
        raise DesktopError(
            DesktopCode.UNAVAILABLE,
            f"not connected to craze within {rust_duration(wait)}; the "
            f"{_VERB_NOUNS.get(verb, verb)} was not sent \u2014 try again",
        )
    return reconnect_in


def lane_answer_lost(verb: str) -> DesktopError:
    """Return the failure for a verb whose answer was lost to a drop (it may have run).

    The same words for every verb: craze's connection dropped under it.
    """
    return DesktopError(
        DesktopCode.OUTCOME_UNKNOWN,
        "outcome unknown: the connection to craze dropped; check the transcript",
    )


CRAZE_LANE = "craze"
"""The craze adapter's kind: its lanes are the craze source's rows, not roost's stamps."""
LANE_KINDS = (OPENCODE_LANE, CRAZE_LANE)
"""The ``agent_lane`` kinds the app has an adapter for (lane.rs ``LANE_KINDS``), in its order."""

_BAD = DesktopCode.BAD_REQUEST


def no_lane_stamp(machine: str, kind: str, session_id: str) -> DesktopError:
    """Return ``no_lane`` for a row the address does not name (lane.rs ``lane_stamp``).

    A craze session the machine's craze source does not list, or a roost row
    with no ``agent_lane`` of ``kind`` under ``session_id``.
    """
    if kind == CRAZE_LANE:
        message = (
            f"machine {rust_debug(machine)}'s craze source lists no session "
            f"{rust_debug(session_id)}"
        )
    else:
        message = (
            f"session {rust_debug(session_id)} on machine {rust_debug(machine)} carries no "
            f"{kind} agent_lane (its tab reported no agent server)"
        )
    return DesktopError(DesktopCode.NO_LANE, message)


def no_open_lane(machine: str, session_id: str) -> DesktopError:
    """Return ``no_lane`` for a verb on a row whose lane was not opened (lane.rs ``open_entry``)."""
    return DesktopError(
        DesktopCode.NO_LANE,
        f"no lane is open for session {rust_debug(session_id)} on machine {rust_debug(machine)}"
        " \u2014 call lane.open first",
    )


def unsupported_lane(kind: str) -> DesktopError:
    """Return ``unsupported_lane`` for a stamp of a kind no adapter speaks (``LaneFailure``)."""
    return DesktopError(
        DesktopCode.UNSUPPORTED_LANE,
        f"this build has no adapter for agent lanes of kind {rust_debug(kind)} "
        f"(it speaks {' and '.join(LANE_KINDS)})",
    )


def parse_send_mode(mode: str | None) -> str:
    """Return ``lane.send``'s mode: trimmed, absent or blank ``queue`` (lane.rs ``parse_mode``).

    Raises:
        DesktopError: ``bad_request`` ``unknown send mode "<m>" (want queue or interject)``.

    """
    word = "queue" if mode is None else mode.strip()
    if word in ("queue", ""):
        return "queue"
    if word == "interject":
        return word
    raise DesktopError(_BAD, f"unknown send mode {rust_debug(word)} (want queue or interject)")


_ANSWER_FORMS = ("choice", "permission", "question", "reject")
_PERMISSIONS = ("allow-once", "allow-always", "reject")


def parse_lane_answer(answer: Any) -> dict[str, Any]:
    """Check ``lane.answer``'s ``answer`` as lane.rs ``parse_answer`` does; return it.

    Exactly one form (``choice``, ``permission``, ``question``, ``reject``) and
    nothing beside it but ``question``'s ``custom_text``. ``choice`` is an opaque
    non-empty string, ``permission`` a trimmed ``allow-once|allow-always|reject``,
    ``question`` a list of lists of strings, ``reject`` the literal ``true``.

    Raises:
        DesktopError: ``bad_request`` with the app's words.

    """
    fields = answer if isinstance(answer, dict) else {}
    named = [form for form in _ANSWER_FORMS if form in fields]
    if not named:
        raise DesktopError(
            _BAD,
            'answer must be {choice: "<option id>"}, {permission: \u2026}, {question: [[\u2026]]} '
            "or {reject: true}",
        )
    if len(named) > 1:
        raise DesktopError(
            _BAD,
            "an answer names exactly one of choice, permission, question or reject; "
            f"this one names {' and '.join(named)}",
        )
    form = named[0]
    stray = next((k for k in fields if k not in (form, "custom_text")), None)
    if stray is not None:
        raise DesktopError(
            _BAD,
            f"an answer carries its one form and nothing else; `{stray}` is not part of a "
            f"`{form}` answer",
        )
    if "custom_text" in fields and form != "question":
        raise DesktopError(
            _BAD,
            "`custom_text` answers a question's free-text field; it has no meaning beside "
            f"`{form}`",
        )
    value = fields[form]
    if form == "choice":
        if not isinstance(value, str):
            raise DesktopError(_BAD, "`choice` must be a string")
        if not value:
            raise DesktopError(_BAD, "`choice` must name an option id offered by the approval")
    elif form == "permission":
        if not isinstance(value, str):
            raise DesktopError(_BAD, "`permission` must be a string")
        if value.strip() not in _PERMISSIONS:
            raise DesktopError(
                _BAD,
                f"unknown permission decision {rust_debug(value.strip())} "
                "(want allow-once, allow-always or reject)",
            )
    elif form == "question":
        wrong = _serde_lists(value, depth=2)
        if wrong is not None:
            raise DesktopError(_BAD, f"`question` must be a list of lists of option ids: {wrong}")
        wrong = _serde_lists(fields.get("custom_text", []), depth=1, nullable=True)
        if wrong is not None:
            raise DesktopError(
                _BAD,
                f"`custom_text` must be a list of strings or nulls, one per question: {wrong}",
            )
    elif value is not True:
        raise DesktopError(_BAD, "`reject` must be the literal true")
    return dict(fields)


def _serde_lists(value: Any, *, depth: int, nullable: bool = False) -> str | None:
    """Return serde's refusal of ``value`` as ``depth`` nested lists of strings, or ``None``."""
    if depth == 0:
        if isinstance(value, str) or (nullable and value is None):
            return None
        return f"invalid type: {json_word(value)}, expected a string"
    if not isinstance(value, list):
        return f"invalid type: {json_word(value)}, expected a sequence"
    for item in value:
        wrong = _serde_lists(item, depth=depth - 1, nullable=nullable)
        if wrong is not None:
            return wrong
    return None


_SETTING_PREFIX = 'a setting change is {kind: "model"|"mode", id} or {kind: "config", id, value}'
_SETTING_FIELDS = {"model": ("id",), "mode": ("id",), "config": ("id", "value", "for_model")}


def _setting_refusal(detail: str) -> DesktopError:
    return DesktopError(_BAD, f"{_SETTING_PREFIX}: {detail}")


def parse_lane_setting(change: Any) -> dict[str, Any]:
    """Check ``lane.set``'s ``change`` as lane.rs ``parse_setting`` does; return it.

    ``{kind: model|mode, id}`` or ``{kind: config, id, value, for_model?}``,
    strictly (no other field), ids and values verbatim; an empty ``id`` or an
    empty ``for_model`` is refused.

    Raises:
        DesktopError: ``bad_request``: the app's prefix and a serde-style reason,
            or the app's sentences for the empty id and ``for_model``.

    """
    if not isinstance(change, dict):
        # serde_json names a scalar (a JSON null is `null`); a list it would read as the
        # enum's sequence form, which this stand-in does not model
        word = "" if isinstance(change, list) else f"{json_word(change)}, "
        raise _setting_refusal(
            f"invalid type: {word}expected internally tagged enum LaneSettingChange"
        )
    kind = change.get("kind")
    if "kind" not in change:
        raise _setting_refusal("missing field `kind`")
    if not isinstance(kind, str) or kind not in _SETTING_FIELDS:
        shown = kind if isinstance(kind, str) else json_word(kind)
        raise _setting_refusal(
            f"unknown variant `{shown}`, expected one of `model`, `mode`, `config`"
        )
    allowed = _SETTING_FIELDS[kind]
    for key in change:
        if key != "kind" and key not in allowed:
            expected = " or ".join(f"`{a}`" for a in allowed) if len(allowed) < 3 else (
                "one of " + ", ".join(f"`{a}`" for a in allowed)
            )
            raise _setting_refusal(f"unknown field `{key}`, expected {expected}")
    required = ("id",) if kind != "config" else ("id", "value")
    for key in required:
        if key not in change:
            raise _setting_refusal(f"missing field `{key}`")
        if not isinstance(change[key], str):
            raise _setting_refusal(f"invalid type: {json_word(change[key])}, expected a string")
    for_model = change.get("for_model")
    if for_model is not None and not isinstance(for_model, str):
        raise _setting_refusal(f"invalid type: {json_word(for_model)}, expected a string")
    if change["id"] == "":
        raise DesktopError(
            _BAD, "a setting change names a model, mode or option the session offers by its id"
        )
    if for_model == "":
        raise DesktopError(
            _BAD,
            "`for_model` names the model the option was chosen for; omit it rather than send "
            "it empty",
        )
    return dict(change)


_LANE_ERROR_TEXT = {
    DesktopCode.UNAUTHORIZED: "the agent requires authentication",
    DesktopCode.UNKNOWN_SESSION: "no such session",
    DesktopCode.UNKNOWN_APPROVAL: "no such approval",
    DesktopCode.ALREADY_SUBMITTED: "that approval already has an answer in flight",
    DesktopCode.ALREADY_RESOLVED: "that approval is already resolved",
    DesktopCode.NOT_ACCEPTING: "the session is not accepting that right now",
}


def lane_error(code: DesktopCode) -> DesktopError:
    """Return an adapter's refusal as ``LaneFailure::Lane`` carries it: its code, its text.

    The unit variants of shed-core's ``LaneError`` and their ``Display`` (charliek/shed
    crates/shed-core/src/lane.rs:1084-1121@6c5536a): ``unauthorized``, ``unknown_session``,
    ``unknown_approval``, ``already_submitted``, ``already_resolved``, ``not_accepting``.

    Raises:
        KeyError: ``code`` is not one of those (the others carry their own text).

    """
    return DesktopError(code, _LANE_ERROR_TEXT[code])

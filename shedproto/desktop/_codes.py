"""The one registry of shed-desktop error codes, both spellings, plus a normaliser.

shed-desktop has a single ``error.code`` string with two families in it: the
mac (Swift) envelope layer speaks hyphenated codes (``unknown-op``,
``invalid-param``, ``parse-error``, ...), the Tauri (Rust) server and every
op-level refusal speak snake_case (``bad_request``, ``outcome_unknown``, lane
codes, ...). :class:`DesktopCode` lists every code either server is known to
send, spelled as it appears on the wire; :func:`normalize_code` folds both
spellings onto one key so a client can match ``not-enabled`` and
``not_enabled`` alike. Unknown codes are never an error: a newer server may
add some, and they pass through the normaliser unchanged apart from folding.
"""

from __future__ import annotations

from enum import Enum

__all__ = ["CodeFamily", "DesktopCode", "code_family", "codes_match", "normalize_code"]


class CodeFamily(Enum):
    """Which layer sends a code: the mac envelope, the Tauri envelope, or an op handler."""

    MAC_ENVELOPE = "mac_envelope"
    """Hyphenated codes of the Swift server's envelope and parameter layer."""
    TAURI_ENVELOPE = "tauri_envelope"
    """snake_case codes of the Rust server's envelope and generic op layer."""
    OP = "op"
    """Op-level refusals (launch, craze, roost, lanes); snake_case in both servers."""
    LANE = "lane"
    """The agent-lane contract's failure codes (``lane.*``, ``craze.*``)."""


class DesktopCode(str, Enum):
    """Every known wire ``error.code``, with its exact spelling as the value."""

    # mac envelope / params (hyphenated)
    PARSE_ERROR = "parse-error"
    """mac: the envelope did not decode (bad JSON, bad id, unknown top-level field)."""
    UNKNOWN_OP = "unknown-op"
    """mac: no such op."""
    INVALID_PARAM = "invalid-param"
    """mac: a parameter is missing, mistyped or invalid."""
    UNKNOWN_FIELD = "unknown-field"
    """mac: ``params`` holds keys outside the op's allow-list."""
    NOT_FOUND = "not-found"
    """mac: the named object does not exist."""
    INTERNAL = "internal"
    """mac: any other failure."""
    NOT_ENABLED = "not-enabled"
    """mac: the op needs (or is refused in) test mode."""
    # tauri envelope / generic (snake_case)
    BAD_REQUEST = "bad_request"
    """tauri and op level: the caller's request is malformed; nothing was touched."""
    UNKNOWN_OP_T = "unknown_op"
    """tauri: no such op (also a non-object request)."""
    NOT_ENABLED_T = "not_enabled"
    """tauri and launch doors: gated by test mode."""
    NOT_FOUND_T = "not_found"
    """tauri: the named object does not exist."""
    ACTION_FAILED = "action_failed"
    """The op was tried and failed (host layer, tab.open, ...)."""
    FRONTEND_NOT_READY = "frontend_not_ready"
    """tauri: the webview has not reported yet; retry."""
    SCREENSHOT_FAILED = "screenshot_failed"
    """tauri: the screenshot could not be taken."""
    UPDATER_DISABLED = "updater_disabled"
    """tauri: the updater is off (e.g. in test mode)."""
    FRAME_TOO_LARGE = "frame_too_large"
    """tauri: the request line exceeded 1 MiB (sent without an id, then close)."""
    # op level
    OUTCOME_UNKNOWN = "outcome_unknown"
    """craze/lane: the answer was lost; the action may have run. Keep the id and retry."""
    NOT_INSTALLED = "not_installed"
    """craze is not installed on the host."""
    TOO_OLD = "too_old"
    """craze on the host is too old for the request."""
    NO_CRAZE = "no_craze"
    """The host has no craze source."""
    UNKNOWN_SESSION = "unknown_session"
    """The host lists no such session."""
    CONSENT_REQUIRED = "consent_required"
    """roost.bootstrap was called without ``consent: true``."""
    ALREADY_BOOTSTRAPPING = "already_bootstrapping"
    """roost.bootstrap: one for the same target is already running; nothing was changed."""
    PROBE = "probe"
    """roost.probe/roost.preview: the probe stage failed (the stage name is the code)."""
    # lane contract
    UNAUTHORIZED = "unauthorized"
    """lane: the caller may not use this lane."""
    UNKNOWN_APPROVAL = "unknown_approval"
    """lane: no such pending approval."""
    ALREADY_SUBMITTED = "already_submitted"
    """lane: the answer was already submitted."""
    ALREADY_RESOLVED = "already_resolved"
    """lane: the approval was already resolved."""
    NOT_ACCEPTING = "not_accepting"
    """lane: the session does not accept this change now."""
    UNAVAILABLE = "unavailable"
    """lane/craze: the hub is unavailable; nothing was sent, a retry is safe."""
    FAILED = "failed"
    """lane/craze: a definite failure, with craze's cause verbatim."""
    NO_LANE = "no_lane"
    """lane: the row carries no agent lane."""
    UNSUPPORTED_LANE = "unsupported_lane"
    """lane: the lane kind is not supported."""

    @property
    def family(self) -> CodeFamily:
        """The layer that sends this code."""
        return _FAMILY[self]

    @property
    def normalized(self) -> str:
        """The dialect-neutral key (snake_case) for matching across dialects."""
        return normalize_code(self.value)


_MAC = {
    DesktopCode.PARSE_ERROR,
    DesktopCode.UNKNOWN_OP,
    DesktopCode.INVALID_PARAM,
    DesktopCode.UNKNOWN_FIELD,
    DesktopCode.NOT_FOUND,
    DesktopCode.INTERNAL,
    DesktopCode.NOT_ENABLED,
}
_TAURI = {
    DesktopCode.UNKNOWN_OP_T,
    DesktopCode.NOT_ENABLED_T,
    DesktopCode.NOT_FOUND_T,
    DesktopCode.FRONTEND_NOT_READY,
    DesktopCode.SCREENSHOT_FAILED,
    DesktopCode.UPDATER_DISABLED,
    DesktopCode.FRAME_TOO_LARGE,
}
_LANE = {
    DesktopCode.UNAUTHORIZED,
    DesktopCode.UNKNOWN_APPROVAL,
    DesktopCode.ALREADY_SUBMITTED,
    DesktopCode.ALREADY_RESOLVED,
    DesktopCode.NOT_ACCEPTING,
    DesktopCode.UNAVAILABLE,
    DesktopCode.FAILED,
    DesktopCode.NO_LANE,
    DesktopCode.UNSUPPORTED_LANE,
}
_FAMILY = {
    code: (
        CodeFamily.MAC_ENVELOPE
        if code in _MAC
        else CodeFamily.TAURI_ENVELOPE
        if code in _TAURI
        else CodeFamily.LANE
        if code in _LANE
        else CodeFamily.OP
    )
    for code in DesktopCode
}


def normalize_code(code: str) -> str:
    """Fold a wire code to its dialect-neutral key: lower case, ``-`` becomes ``_``.

    ``"not-enabled"`` and ``"not_enabled"`` both give ``"not_enabled"``. Never
    raises; unknown codes fold the same way.
    """
    return code.strip().lower().replace("-", "_")


def codes_match(received: str, expected: str | DesktopCode) -> bool:
    """Return whether ``received`` is ``expected`` in either dialect's spelling."""
    wanted = expected.value if isinstance(expected, DesktopCode) else expected
    return normalize_code(received) == normalize_code(wanted)


def code_family(code: str) -> CodeFamily | None:
    """Return the family of a wire code spelled exactly, or ``None`` if unknown."""
    try:
        return DesktopCode(code).family
    except ValueError:
        return None

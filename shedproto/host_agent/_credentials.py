"""What a client makes of a ``credential.response``: a token, a certificate, or a refusal.

The rules are the shed fixtures' (``credential_response.json``), which both
real clients follow; the point is to never downgrade silently:

* a non-empty ``error`` wins over anything else (an oversized one is refused
  as such);
* ``server`` may be empty, but a non-empty mismatch is refused;
* ``auth_mode`` ``""``/absent/``token``/``secure`` (the deprecated alias) is
  the token arm, exactly ``mtls`` the certificate arm, anything else (case or
  spaces included) is refused;
* each arm needs its credential and must not carry the other's fields
  (a stray ``cert_serial`` on a token answer is "ambiguous");
* sizes are capped; a populated but unparseable ``expires_at`` is refused.

The agent's side is here too: :func:`credential_reply` builds the
``token.response`` / ``credential.response`` the agent writes for what its
minter returned (:class:`MintedCredential`) or the error it raised.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from .types import CredentialGet, CredentialResponse, TokenGet, TokenResponse

__all__ = [
    "CREDENTIAL_LIMITS",
    "NO_CREDENTIAL_MINTER",
    "NO_TOKEN_MINTER",
    "CertificateCredential",
    "CredentialRefused",
    "MintedCredential",
    "credential_reply",
    "no_minter_error",
    "TokenCredential",
    "classify_credential",
    "parse_timestamp",
]

CREDENTIAL_LIMITS = {
    "token": 4096,
    "client_cert": 65536,
    "cert_serial": 128,
    "error": 4096,
}
"""Byte caps per field, from the fixtures' ``limits``."""

_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})"
)


def parse_timestamp(text: str) -> int | None:
    """Parse an RFC 3339 timestamp to whole Unix seconds; ``None`` if it is not one.

    Never raises; impossible dates (month 13, hour 99) are ``None`` too.
    """
    match = _RFC3339.fullmatch(text)
    if match is None:
        return None
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    zone = match.group(8)
    try:
        offset = timedelta(0)
        if zone not in ("Z", "z"):
            sign = 1 if zone[0] == "+" else -1
            offset = sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
        moment = datetime(year, month, day, hour, minute, second, tzinfo=timezone(offset))
    except ValueError:
        return None
    return int(moment.timestamp())


@dataclass(frozen=True)
class TokenCredential:
    """A bearer control token; ``expires_at`` in Unix seconds or ``None``."""

    token: str
    expires_at: int | None = None


@dataclass(frozen=True)
class CertificateCredential:
    """An mTLS client certificate (PEM) and its serial (``""`` when not sent)."""

    cert_pem: str
    serial: str = ""
    expires_at: int | None = None


@dataclass(frozen=True)
class CredentialRefused:
    """The response cannot be used; ``message`` says why (or is the agent's error)."""

    message: str


def _too_big(value: str, field: str) -> bool:
    return len(value.encode()) > CREDENTIAL_LIMITS[field]


def classify_credential(
    response: CredentialResponse, *, server: str
) -> TokenCredential | CertificateCredential | CredentialRefused:
    """Map ``response`` to the arm a client may use for ``server`` (what it asked for).

    Never raises: everything unusable is a :class:`CredentialRefused`.
    """
    if response.error:
        if _too_big(response.error, "error"):
            return CredentialRefused("oversized error message from the agent")
        return CredentialRefused(response.error)
    if response.server and response.server != server:
        return CredentialRefused(
            f"credential for unexpected server {response.server!r} (asked for {server!r})"
        )
    mode = response.auth_mode
    if mode not in ("", "token", "secure", "mtls"):
        return CredentialRefused(f"unknown auth mode {mode!r}")
    expires_at: int | None = None
    if response.expires_at:
        expires_at = parse_timestamp(response.expires_at)
        if expires_at is None:
            return CredentialRefused(f"unparseable expiry {response.expires_at!r}")
    if mode == "mtls":
        if response.token:
            return CredentialRefused("ambiguous credential: a certificate answer carries a token")
        if not response.client_cert:
            return CredentialRefused("mtls answer with no certificate")
        if _too_big(response.client_cert, "client_cert"):
            return CredentialRefused("oversized certificate")
        if _too_big(response.cert_serial, "cert_serial"):
            return CredentialRefused("oversized certificate serial")
        return CertificateCredential(response.client_cert, response.cert_serial, expires_at)
    if response.client_cert or response.cert_serial:
        return CredentialRefused("ambiguous credential: a token answer carries certificate fields")
    if not response.token:
        return CredentialRefused("token answer with no token")
    if _too_big(response.token, "token"):
        return CredentialRefused("oversized token")
    return TokenCredential(response.token, expires_at)


NO_TOKEN_MINTER = "control-token minting is not available"
"""The agent's ``token.response`` error when it has no minter."""
NO_CREDENTIAL_MINTER = "control-credential minting is not available"
"""The agent's ``credential.response`` error when it has no minter."""


@dataclass(frozen=True)
class MintedCredential:
    """What a minter returns: a token (``auth_mode`` ``token``) or a certificate (``mtls``)."""

    auth_mode: str = "token"
    token: str = ""
    client_cert: str = ""
    cert_serial: str = ""
    expires_at: str = ""


def no_minter_error(request: TokenGet | CredentialGet) -> str:
    """Return the error the agent answers ``request`` with when it cannot mint at all."""
    return NO_TOKEN_MINTER if isinstance(request, TokenGet) else NO_CREDENTIAL_MINTER


def credential_reply(
    request: TokenGet | CredentialGet,
    minted: MintedCredential | None,
    error: str,
    *,
    id: str,
    ts: str,
) -> TokenResponse | CredentialResponse:
    """Return the agent's answer to ``request``: what was ``minted``, or ``error``.

    A ``token.get`` answered by an mTLS server is refused (the asking app is
    too old to use a certificate); a ``credential.response`` carries only the
    fields of its arm. Never raises.
    """
    if isinstance(request, TokenGet):
        if minted is not None and minted.auth_mode == "mtls":
            error = (
                f'server "{request.server}" issues client certificates (auth.mode: mtls); '
                "this shed-desktop is too old to use one \u2014 upgrade the app"
            )
            minted = None
        return TokenResponse(
            id=id,
            ts=ts,
            in_reply_to=request.id,
            server=request.server,
            token=minted.token if minted else "",
            expires_at=minted.expires_at if minted else "",
            error=error,
        )
    mtls = minted is not None and minted.auth_mode == "mtls"
    return CredentialResponse(
        id=id,
        ts=ts,
        in_reply_to=request.id,
        server=request.server,
        auth_mode=minted.auth_mode if minted else "",
        token=minted.token if minted and not mtls else "",
        client_cert=minted.client_cert if minted and mtls else "",
        cert_serial=minted.cert_serial if minted and mtls else "",
        expires_at=minted.expires_at if minted else "",
        error=error,
    )

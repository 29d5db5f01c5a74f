"""Frame ids: random version-4 UUID strings, from entropy the caller supplies."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["IdSource"]

_VARIANT = {digit: "89ab"[int(digit, 16) & 3] for digit in "0123456789abcdef"}


class IdSource:
    """Calling it returns a fresh id like ``str(uuid.uuid4())``, at a fraction of the cost.

    ``entropy(n)`` must return ``n`` random bytes (the shells pass
    ``os.urandom``; tests may pass a seeded source). It is drawn in blocks
    of ``block`` ids, so ``uuid4``'s syscall and ``UUID`` object per id are
    saved on the fan-out and approval paths. The version nibble is ``4``
    and the variant bits are RFC 4122's, exactly as ``uuid4`` sets them.

    Raises:
        ValueError: ``block`` is not positive, or ``entropy`` returned the
            wrong number of bytes (on the call that refills).

    """

    __slots__ = ("_block", "_entropy", "_ids")

    def __init__(self, entropy: Callable[[int], bytes], *, block: int = 128) -> None:
        if block <= 0:
            raise ValueError(f"block must be positive, got {block}")
        self._entropy = entropy
        self._block = block
        self._ids: list[str] = []

    def __call__(self) -> str:
        """Return the next id."""
        ids = self._ids
        if not ids:
            self._refill()
        return ids.pop()

    def _refill(self) -> None:
        raw = self._entropy(16 * self._block)
        if len(raw) != 16 * self._block:
            raise ValueError(f"entropy returned {len(raw)} bytes, expected {16 * self._block}")
        h = raw.hex()
        v = _VARIANT
        self._ids[:] = [
            f"{h[i : i + 8]}-{h[i + 8 : i + 12]}-4{h[i + 13 : i + 16]}"
            f"-{v[h[i + 16]]}{h[i + 17 : i + 20]}-{h[i + 20 : i + 32]}"
            for i in range(0, len(h), 32)
        ]

"""Signed, expiring, revocable credentials: what a browser holds to prove who signed in.

A credential is a small JSON object (who, until when, a random id, any claims the
caller adds) signed with HMAC by itsdangerous (the library Flask and Gradio's own
OAuth session use): nobody without the key can make or change one. `verify` refuses a
credential that is forged, expired or revoked. `revoke` (sign-out) lists its id until
it would have expired anyway, so every copy of it (another tab, a stolen one) stops
working at once.

The key is random per process unless one is given: a restart signs everyone out,
which also means the revocation list, kept in memory, never has to outlive the key.
One `Credentials` per purpose (`purpose` salts the signature, so an admin credential
is never accepted where a participant's is expected, or the other way round).
"""
from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from typing import Any

from itsdangerous import BadSignature, URLSafeSerializer


class Credentials:
    """Issue and check credentials for one purpose; each lives `lifetime_s` seconds from its issue."""

    def __init__(self, purpose: str, lifetime_s: float, key: bytes | None = None,
                 clock: Callable[[], float] = time.time):
        self.purpose, self.lifetime_s, self.clock = purpose, lifetime_s, clock
        self._serializer = URLSafeSerializer(key or secrets.token_bytes(32), salt=f"complab-{purpose}")
        self._revoked: dict[str, float] = {}  # id -> when it would have expired
        self._lock = threading.Lock()

    def issue(self, subject: str, **claims: Any) -> str:
        """A new credential for `subject` with `claims` (JSON values), valid from now for `lifetime_s`."""
        payload = {**claims, "sub": subject, "exp": self.clock() + self.lifetime_s, "id": secrets.token_hex(16)}
        return self._serializer.dumps(payload)

    def verify(self, token: object) -> dict[str, Any] | None:
        """The claims of a genuine, unexpired, unrevoked credential; None for anything else (no reason given:
        a caller treats every failure as "not signed in")."""
        if not isinstance(token, str) or not token or len(token) > 4096:
            return None
        try:
            claims = self._serializer.loads(token)
        except BadSignature:
            return None
        if not isinstance(claims, dict) or not isinstance(claims.get("exp"), (int, float)):
            return None
        with self._lock:
            if claims["exp"] <= self.clock() or claims.get("id") in self._revoked:
                return None
        return claims

    def revoke(self, token: object) -> bool:
        """Make a genuine credential invalid everywhere from now on; False when it was not valid anyway."""
        claims = self.verify(token)
        if claims is None:
            return False
        with self._lock:
            now = self.clock()
            self._revoked = {key: until for key, until in self._revoked.items() if until > now}
            self._revoked[claims["id"]] = claims["exp"]
        return True

"""Who may write through the dashboard (and, with a token configured, read), and how a browser proves it.

The operator of the server declares the tokens when starting it; nothing else grants access.

* A :class:`Token` has a ``name`` (what the audit trail records), a ``secret`` and a
  ``role``: ``operator`` may create, edit, run and record; ``rater`` may judge and read.
  An operator may do whatever a rater may (:data:`ROLES` is ordered by power).
  ``evaltool serve --token NAME=SECRET`` (repeatable; a bare ``--token SECRET`` or
  ``EVALTOOL_TOKEN=SECRET`` is the operator token named ``default``), ``--rater-token
  NAME=SECRET``, or ``--tokens-file FILE`` with lines ``ROLE NAME=SECRET``
  (:func:`read_tokens_file`).
* Secrets are compared in constant time: every configured token is compared with what
  was presented (their sha256 digests, with :func:`hmac.compare_digest`), whether or not
  an earlier one matched (:meth:`Access.find`).
* API clients send ``Authorization: Bearer SECRET`` on every request. A browser exchanges
  the secret on ``/login`` for a session cookie (``HttpOnly``, ``SameSite=Strict``,
  ``Secure`` under HTTPS; kept in the server's memory for :data:`SESSION_SECONDS`, so a
  restart logs everyone out) and ``/logout`` ends it.
* A request authenticated by the cookie that changes anything (any method but GET, HEAD,
  OPTIONS) must carry the session's CSRF token: the form field ``csrf_token``
  (:func:`csrf_field` writes it into a form) or the header ``X-CSRF-Token``; and a
  request a browser marks as cross-site (``Sec-Fetch-Site: cross-site``, or an ``Origin``
  other than the server's own) is refused whatever it carries. Both are 403.
* Without any token the dashboard is read-only (writes are 403 and the pages say so);
  with tokens, reads need one too unless the server was started with ``--public-read``.

For the code of a page or endpoint that writes (the suites editor, the job runner, the
judging pages), the whole API is::

    from evaltool.server.auth import csrf_field, form_of, require
    from evaltool.history import log_write

    async def create_suite(request):
        who = await require(request, "operator")        # 401 / 403, CSRF checked; an Identity
        form = await form_of(request)                     # the URL-encoded form, read once by require
        with history.writing() as conn:
            ...                                           # the write itself
            log_write(conn, actor=who.name, role=who.role, action="create", subject_kind="suite",
                      subject=form["name"])

    # in the page that shows the form:  tag("form", csrf_field(request), ..., method="post")

:func:`identity` tells who a request is without refusing it (None when anonymous), and
:func:`csrf_token` is the bare token for a script that sends ``X-CSRF-Token`` (an upload sent
as the body of a ``fetch`` carries it that way; forms are URL-encoded, :func:`form_of`).

>>> access = Access.from_specs(["ci=s3cret"], raters=["ana=r4ter"])
>>> access.find("s3cret").name, access.find("r4ter").role, access.find("nope")
('ci', 'rater', None)
>>> parse_token("0nly-a-secret")
Token(name='default', role='operator')
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import threading
import time
from dataclasses import dataclass, field

from evaltool.errors import EvaltoolError
from evaltool.server.params import RequestError

ROLES = ("rater", "operator")  # each may do what the ones before it may
DEFAULT_NAME = "default"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")
SESSION_COOKIE = "evaltool_session"
LOGIN_COOKIE = "evaltool_login"  # the login form's own CSRF value (double submit), before any session exists
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "x-csrf-token"
SESSION_SECONDS = 12 * 3600
MAX_SESSIONS = 10_000  # the oldest are forgotten past this
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


@dataclass(frozen=True)
class Token:
    name: str
    secret: str = field(repr=False)
    role: str = "operator"
    digest: bytes = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        if not NAME.match(self.name):
            raise EvaltoolError(
                f"token name {self.name[:200]!r}: expected letters, digits and . _ @ - "
                "(at most 64, starting with a letter or digit)"
            )
        if not self.secret or self.secret != self.secret.strip():
            raise EvaltoolError(f"token {self.name!r}: the secret is empty or starts or ends with a space")
        if self.role not in ROLES:
            raise EvaltoolError(f"token {self.name!r}: role {self.role!r}; expected one of {', '.join(ROLES)}")
        object.__setattr__(self, "digest", hashlib.sha256(self.secret.encode()).digest())


def parse_token(text: str, role: str = "operator") -> Token:
    """``NAME=SECRET``, or a bare ``SECRET`` (no ``=``) named :data:`DEFAULT_NAME`. A secret that
    itself holds ``=`` is written with its name: ``default=abc==``."""
    name, sep, secret = text.partition("=")
    return Token(name.strip(), secret, role) if sep else Token(DEFAULT_NAME, text, role)


def read_tokens_file(path) -> list[Token]:
    """Tokens from a file of lines ``ROLE NAME=SECRET`` (``#`` starts a comment line; blank lines
    are skipped). A line that does not parse is an EvaltoolError naming the file and line
    (never showing the secret)."""
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise EvaltoolError(f"--tokens-file {path}: cannot read it ({exc})") from None
    tokens = []
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        role, _, spec = text.partition(" ")
        if role not in ROLES or "=" not in spec:
            raise EvaltoolError(
                f"--tokens-file {path}:{number}: expected 'ROLE NAME=SECRET' with ROLE one of "
                f"{', '.join(ROLES)}; found a line starting {role[:20]!r}"
            )
        try:
            tokens.append(parse_token(spec.strip(), role))
        except EvaltoolError as exc:
            raise EvaltoolError(f"--tokens-file {path}:{number}: {exc}") from None
    return tokens


@dataclass(frozen=True)
class Identity:
    """Who made a request: the token's name and role, and how they proved it (``bearer`` or ``session``)."""

    name: str
    role: str
    via: str

    def may(self, role: str) -> bool:
        return ROLES.index(self.role) >= ROLES.index(role)


@dataclass
class Session:
    name: str
    role: str
    csrf: str
    expires: float


class Access:
    """The server's tokens, whether reading is public, and the browser sessions opened with them."""

    def __init__(self, tokens=(), public_read: bool = False):
        self.tokens = list(tokens)
        names = [t.name for t in self.tokens]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise EvaltoolError(f"token name {twice[0]!r} is given twice; each token needs its own name")
        digests = [t.digest for t in self.tokens]
        if len(set(digests)) != len(digests):
            raise EvaltoolError("two tokens have the same secret; each token needs its own")
        self.public_read = public_read or not self.tokens  # without tokens nothing is secret, nothing writable
        self._sessions: dict[bytes, Session] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_specs(cls, specs=(), raters=(), tokens_file=None, public_read: bool = False) -> Access:
        """From the command line's ``--token`` and ``--rater-token`` texts and a ``--tokens-file``."""
        tokens = [parse_token(s) for s in specs] + [parse_token(s, "rater") for s in raters]
        if tokens_file:
            tokens += read_tokens_file(tokens_file)
        return cls(tokens, public_read)

    @property
    def writable(self) -> bool:
        return bool(self.tokens)

    def find(self, secret: str | None) -> Token | None:
        """The token whose secret is ``secret``; every token is compared, in constant time each."""
        if not secret:
            return None
        given = hashlib.sha256(secret.encode("utf-8", "surrogatepass")).digest()
        found = None
        for token in self.tokens:
            if hmac.compare_digest(given, token.digest):
                found = token
        return found

    def describe(self) -> str:
        """What the start-up message says about access."""
        if not self.tokens:
            return "read-only: no --token, so nothing can be written through it; reading is open to all who reach it"
        names = ", ".join(f"{t.name} ({t.role})" for t in self.tokens)
        reads = (
            "reading is open to all who reach it (--public-read)"
            if self.public_read
            else "reading needs a token too (--public-read opens it)"
        )
        return f"writing needs a token: {names}; {reads}"

    # ---------------------------------------------------------------- sessions

    def open_session(self, token: Token) -> tuple[str, Session]:
        """A new session for ``token``: the cookie value (only its digest is kept) and the session."""
        key = secrets.token_urlsafe(32)
        session = Session(token.name, token.role, secrets.token_urlsafe(32), time.monotonic() + SESSION_SECONDS)
        with self._lock:
            self._forget_expired()
            while len(self._sessions) >= MAX_SESSIONS:
                self._sessions.pop(next(iter(self._sessions)))
            self._sessions[_digest(key)] = session
        return key, session

    def session(self, key: str | None) -> Session | None:
        if not key:
            return None
        with self._lock:
            found = self._sessions.get(_digest(key))
            if found is not None and found.expires < time.monotonic():
                del self._sessions[_digest(key)]
                return None
            if found is not None and not any(t.name == found.name for t in self.tokens):
                return None
            return found

    def close_session(self, key: str | None) -> None:
        if key:
            with self._lock:
                self._sessions.pop(_digest(key), None)

    def _forget_expired(self) -> None:
        moment = time.monotonic()
        for key in [k for k, s in self._sessions.items() if s.expires < moment]:
            del self._sessions[key]


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()


def access_of(request) -> Access:
    return request.app.state.settings.access


def bearer(request) -> str | None:
    """The secret of an ``Authorization: Bearer`` header, None without one."""
    scheme, _, credential = request.headers.get("authorization", "").partition(" ")
    return credential.strip() if scheme.lower() == "bearer" and credential.strip() else None


def identity(request) -> Identity | None:
    """Who the request is (bearer token first, then the session cookie), None when anonymous.
    A bearer header that matches no token is anonymous too (:func:`require` says 401)."""
    access = access_of(request)
    secret = bearer(request)
    if secret is not None:
        token = access.find(secret)
        return Identity(token.name, token.role, "bearer") if token else None
    session = access.session(request.cookies.get(SESSION_COOKIE))
    return Identity(session.name, session.role, "session") if session else None


def csrf_token(request) -> str | None:
    """The CSRF token of the request's session (None without a session)."""
    session = access_of(request).session(request.cookies.get(SESSION_COOKIE))
    return session.csrf if session else None


def csrf_field(request):
    """The hidden form field carrying the session's CSRF token (empty markup without a session)."""
    from evaltool.report.html import Markup, escape

    token = csrf_token(request)
    return Markup(f'<input type="hidden" name="{CSRF_FIELD}" value="{escape(token)}">' if token else "")


def cross_site(request) -> bool:
    """Whether a browser says this request comes from another origin: its Fetch metadata
    (``Sec-Fetch-Site`` other than ``same-origin`` or ``none``; another port of this host is
    ``same-site``, and refused too), else an ``Origin`` header naming another origin. Pages sent
    with ``no-referrer`` make the browser say ``Origin: null`` for their own forms, so ``null``
    alone decides nothing (the CSRF token does)."""
    fetch_site = request.headers.get("sec-fetch-site")
    if fetch_site is not None:
        return fetch_site.strip().lower() not in ("same-origin", "none")
    origin = request.headers.get("origin")
    if origin is None or origin.strip() == "null":
        return False
    own = f"{request.url.scheme}://{request.headers.get('host', '')}"
    return origin.strip().rstrip("/").lower() != own.lower()


FORM_TYPE = "application/x-www-form-urlencoded"


async def form_of(request) -> dict[str, str]:
    """The request's URL-encoded form as {field: first value} (read once, within the body limit, and
    kept on the request). Any other body is an empty form; a body that is not UTF-8 is a 400."""
    from urllib.parse import parse_qsl

    kept = getattr(request.state, "evaltool_form", None)
    if kept is not None:
        return kept
    form: dict[str, str] = {}
    if request.headers.get("content-type", "").split(";")[0].strip().lower() == FORM_TYPE:
        body = await request.body()
        try:
            pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, max_num_fields=1000)
        except (UnicodeDecodeError, ValueError) as exc:
            raise RequestError(f"the form is not URL-encoded UTF-8 text ({str(exc)[:200]})") from None
        for key, value in pairs:
            form.setdefault(key, value)
    request.state.evaltool_form = form
    return form


async def presented_csrf(request) -> str:
    """The CSRF token a request carries: the header, else the form field."""
    return request.headers.get(CSRF_HEADER) or (await form_of(request)).get(CSRF_FIELD, "")


async def require(request, role: str = "operator") -> Identity:
    """The identity of a request allowed to act as ``role``, or a RequestError:

    * 403 when the server has no token (read-only), the request is cross-site, or a cookie
      session's CSRF token is missing or wrong on a method that changes things;
    * 401 when no valid token or session comes with it (the answer asks for a bearer token);
    * 403 when the token's role is below ``role`` (a rater where an operator is needed).
    """
    if role not in ROLES:
        raise ValueError(f"role {role!r}; expected one of {ROLES}")
    access = access_of(request)
    if not access.writable:
        raise RequestError(
            "this dashboard is read-only: start 'evaltool serve' with --token (or EVALTOOL_TOKEN) to allow writing",
            status=403,
        )
    unsafe = request.method not in SAFE_METHODS
    if unsafe and cross_site(request):
        raise RequestError("a request from another site is refused", status=403)
    who = identity(request)
    if who is None:
        raise Unauthorized("log in (/login), or send the header 'Authorization: Bearer TOKEN'")
    if unsafe and who.via == "session":
        expected = csrf_token(request) or ""
        given = await presented_csrf(request)
        if not given or not hmac.compare_digest(given.encode("utf-8", "surrogatepass"), expected.encode()):
            raise RequestError(
                "the form's security token (CSRF) is missing or stale: reload the page and try again", status=403
            )
    if not who.may(role):
        raise RequestError(
            f"the token {who.name!r} is a {who.role}'s; this needs an {role}'s"
            if role == "operator"
            else f"the token {who.name!r} may not do this",
            status=403,
        )
    return who


class Unauthorized(RequestError):
    """401: no valid credentials (the app adds ``WWW-Authenticate: Bearer``)."""

    def __init__(self, message: str):
        super().__init__(message, status=401)


def safe_next(target: str | None) -> str:
    """Where to go after logging in: a path on this server only (never another host)."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    if any(ord(c) < 32 for c in target):
        return "/"
    return target

#!/usr/bin/env python3
"""The hook client of every agent: `notify.py [AGENT]` (claude-code when no AGENT is given).

Claude Code runs it on PostToolUse (Read/Write/Edit/MultiEdit/NotebookEdit), FileChanged and
Stop; Gemini CLI on AfterTool; Cursor on beforeReadFile and afterFileEdit; OpenCode's plugin
(plugin/opencode/live-memory.js) on its file tools. What differs per agent is data (AGENTS:
which events and tools read or write, where the path and the workspace are), not code.

Tees what the agent reads and writes to the live-memory server (POST /notify), so its memory
stays current without re-reading files; at Stop, hands the session's transcript to the server
(POST /api/enqueue with `{cwd, session_id, transcript_path}`) to be distilled in the background.
The contract with the agents: standard library only, exit 0 always, nothing on stdout (but
the permission Cursor's beforeReadFile waits for), and
fast: the agent waits for this hook (~30 ms; a raw socket instead of http.client saves the
~30 ms its email-parser import costs). Each connection first checks that the server is this
user's own (server-identity.py: one more round trip on the same connection) before the token
or any content goes out.

The body is the raw hook payload plus a top-level "content" (the file's bytes as they are now on
disk) when the payload lacks it. Secret-looking, binary and oversize files never send bytes: a
read of one is not forwarded at all, a write becomes a content-less "change" event.

When the server is down (or answers 5xx) the body goes to a bounded spool (JSONL under
$CLAUDE_PLUGIN_DATA/spool/, else ~/.local/share/live-memory/spool/; oldest dropped first). The
server replays it itself (live_memory/gateway/spool_replay.py: when session-start names it, and
at every start), under the same flock; the next call here that reaches the server replays what
is still left, in order, before its own event. A /notify
body is spooled as it is; a body for another route is wrapped as `{"route": R, "body": B}`.
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from fnmatch import fnmatchcase

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
identity = __import__("server-identity")  # the check that the server is ours (kebab-case name)

TOOL_KINDS = {
    "Read": "read",
    "Write": "write",
    "Edit": "write",
    "MultiEdit": "write",
    "NotebookEdit": "write",
}
# Mirrors live_memory.config.constants.DEFAULT_SECRET_PATH_PATTERNS (a test keeps them equal);
# the script cannot import the package: it runs under whatever python3 the user has.
SECRET_PATTERNS = (
    ".env*",
    "*.env",
    ".flaskenv",
    "*.tfvars",
    "*.tfvars.json",
    "credentials.csv",
    "*_credentials.csv",
    "*accesskeys.csv",
    "*.docker/config.json",
    "*.kube/config",
    "kubeconfig",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".netrc",
    ".npmrc",
    ".pypirc",
    "credentials",
    "credentials.json",
    "*.credentials",
    ".git-credentials",
    "secrets.*",
    ".pgpass",
    "*.ppk",
    ".htpasswd",
    ".s3cfg",
    ".boto",
    ".dockercfg",
    "*.jks",
    "*.keystore",
    "*.p8",
    "*.kdbx",
    "*.tfstate",
    "*.tfstate.*",
    "application_default_credentials.json",
    "credentials.db",
    "access_tokens.db",
    "accessTokens.json",
    "msal_token_cache.json",
    ".vault-token",
)
MAX_FILE_BYTES = 256 * 1024  # = constants.PASSIVE_MAX_FILE_BYTES, the server's own cap
SNIFF_BYTES = 8192
REPLY_MAX_BYTES = 64 * 1024
POST_TIMEOUT_S = 0.5
NOTIFY_ROUTE = "/notify"
ENQUEUE_ROUTE = "/api/enqueue"
# The server reads and digests the transcript before it answers; a late answer is spooled and
# replayed, which the server turns into "already queued".
ROUTE_TIMEOUTS_S = {NOTIFY_ROUTE: POST_TIMEOUT_S, ENQUEUE_ROUTE: 2.0}
ENVELOPE_HEAD = b'{"route":"/'
SPOOL_MAX_EVENTS = 500
SPOOL_MAX_BYTES = 16 * 1024 * 1024
SPOOL_LOCK_WAIT_S = 2.0
DELIVERED, REFUSED, FAILED = "delivered", "refused", "failed"
CLAUDE_CODE = "claude-code"


class Agent:
    """One agent's hook payloads, as data. `events`: hook event -> "tool" (the tool's name
    says what it is), "read" / "write" (the event is one), "changed" (FileChanged) or "stop"
    (hand over the transcript); `tools`: tool name -> "read", "write" or "shell" (a command
    whose file words are reads); `reply`: what the agent wants on stdout (Cursor's
    beforeReadFile waits for a permission)."""

    def __init__(
        self,
        events: Mapping[str, str],
        tools: Mapping[str, str] | None = None,
        reply: Mapping[str, str] | None = None,
    ) -> None:
        self.events, self.tools, self.reply = events, tools or {}, reply or {}


AGENTS = {
    # Claude Code's payload goes as it is (the server parses it: gateway/notify_parse.py).
    CLAUDE_CODE: Agent(
        {"PostToolUse": "tool", "FileChanged": "changed", "Stop": "stop"}, TOOL_KINDS
    ),
    "gemini": Agent(
        {"AfterTool": "tool"}, {"read_file": "read", "write_file": "write", "replace": "write"}
    ),
    "cursor": Agent(
        {"beforeReadFile": "read", "afterFileEdit": "write"},
        reply={"beforeReadFile": '{"permission":"allow"}'},
    ),
    "opencode": Agent(
        {"tool.execute.before": "tool", "tool.execute.after": "tool"},
        {"read": "read", "write": "write", "edit": "write", "patch": "write", "multiedit": "write"},
    ),
    # Codex reads through its shell: PostToolUse reports the command, whose file words are
    # teed as reads; its edits (apply_patch) reach no hook: the OS watcher sees those.
    "codex": Agent({"PostToolUse": "tool"}, {"Bash": "shell"}),
}
PATH_KEYS = ("file_path", "notebook_path", "absolute_path", "filePath", "path")
SHELL_MAX_FILES = 8  # files teed from one shell command
SHELL_MAX_WORDS = 64
SHELL_MAX_CHARS = 4096


def is_secret(path: str) -> bool:
    # As the server's is_secret_path: the name or the whole path, case-insensitively (a
    # pattern with a '/' names a place: `*.docker/config.json`).
    path = path.replace("\\", "/").lower()
    name = path.rpartition("/")[2]
    patterns = [pattern.lower() for pattern in SECRET_PATTERNS]
    return any(fnmatchcase(name, pattern) or fnmatchcase(path, pattern) for pattern in patterns)


def read_text(path: str, cap: int) -> str | None:
    """The file's text, or None when it is missing, not regular, over `cap`, or binary."""
    try:
        info = os.stat(path)  # before open(): opening a FIFO would block the agent
        if not stat.S_ISREG(info.st_mode) or info.st_size > cap:
            return None
        with open(path, "rb") as handle:
            data = handle.read(cap + 1)
    except OSError:
        return None
    if len(data) > cap or b"\0" in data[:SNIFF_BYTES]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def workspace_of(payload: Mapping[str, object]) -> str | None:
    """The agent's working directory: `cwd`, else the first of Cursor's `workspace_roots`."""
    cwd = payload.get("cwd")
    roots = payload.get("workspace_roots")
    if not isinstance(cwd, str) and isinstance(roots, list) and roots:
        cwd = roots[0]
    return cwd if isinstance(cwd, str) and cwd else None


def build_body(payload: Mapping[str, object], agent: str = CLAUDE_CODE) -> dict[str, object] | None:
    """What to POST for this hook payload, or None when nothing should be sent."""
    spec = AGENTS.get(agent)
    role = spec.events.get(str(payload.get("hook_event_name"))) if spec else None
    if role == "changed":
        return dict(payload) if isinstance(payload.get("file_path"), str) else None
    source: object = payload
    if role == "tool":
        assert spec is not None
        role, source = spec.tools.get(str(payload.get("tool_name"))), payload.get("tool_input")
    cwd = workspace_of(payload)
    if role == "shell" and isinstance(source, Mapping) and cwd is not None:
        return shell_reads(source.get("command"), cwd)
    if role not in ("read", "write") or not isinstance(source, Mapping) or cwd is None:
        return None
    raw_path = next((source[k] for k in PATH_KEYS if isinstance(source.get(k), str)), None)
    if not raw_path:
        return None
    path = os.path.join(cwd, raw_path)  # an absolute raw_path wins
    given = payload.get("content")
    if agent == CLAUDE_CODE and "content" in payload:
        return dict(payload)
    if isinstance(given, str) and not is_secret(path) and len(given) <= MAX_FILE_BYTES:
        content: str | None = given
    else:
        content = None if is_secret(path) else read_text(path, MAX_FILE_BYTES)
    if content is None:
        if role == "read":
            return None  # nothing worth knowing about a file whose bytes we will not share
        return {"cwd": cwd, "events": [{"path": path, "kind": "change"}]}
    if agent == CLAUDE_CODE:
        return {**payload, "content": content}
    return {"cwd": cwd, "events": [{"path": path, "kind": role, "content": content}]}


def shell_reads(command: object, cwd: str) -> dict[str, object] | None:
    """The files a shell command named (`cat a.py`, `sed -n 1,80p a.py`, `bash -lc '...'`), as
    reads with their bytes now: an agent that reads through its shell reports no file reads.
    Only words that are existing regular files under `cwd` count, at most SHELL_MAX_FILES."""
    import shlex  # noqa: PLC0415 (only Codex's hooks pay for it)

    words = list(command) if isinstance(command, list) else [command]
    events: list[dict[str, object]] = []
    seen: set[str] = set()
    for word in words[:SHELL_MAX_WORDS]:
        if not isinstance(word, str):
            continue
        try:
            parts = shlex.split(word[:SHELL_MAX_CHARS]) if " " in word else [word]
        except ValueError:
            continue
        for part in parts[:SHELL_MAX_WORDS]:
            path = os.path.normpath(os.path.join(cwd, part))
            if part.startswith("-") or path in seen or not path.startswith(cwd + os.sep):
                continue
            seen.add(path)
            content = None if is_secret(path) else read_text(path, MAX_FILE_BYTES)
            if content is not None:
                events.append({"path": path, "kind": "read", "content": content})
            if len(events) >= SHELL_MAX_FILES:
                return {"cwd": cwd, "events": events}
    return {"cwd": cwd, "events": events} if events else None


def build_enqueue(payload: Mapping[str, object]) -> dict[str, object] | None:
    """The /api/enqueue body for a Stop payload, or None when a field is missing."""
    body = {key: payload.get(key) for key in ("cwd", "session_id", "transcript_path")}
    if not all(isinstance(value, str) and value for value in body.values()):
        return None
    return body


def wrap(route: str, body: bytes) -> bytes:
    """The spool line of `body` bound for `route` (a /notify body is kept as it is)."""
    if route == NOTIFY_ROUTE:
        return body
    return b'{"route":' + json.dumps(route).encode() + b',"body":' + body + b"}"


def unwrap(line: bytes) -> tuple[str, bytes] | None:
    """(route, body) of a spool line; None for an envelope naming a route we do not know."""
    if not line.startswith(ENVELOPE_HEAD):
        return NOTIFY_ROUTE, line
    try:
        envelope = json.loads(line)
    except ValueError:
        return None
    route = envelope.get("route") if isinstance(envelope, dict) else None
    if route not in ROUTE_TIMEOUTS_S or not isinstance(envelope.get("body"), dict):
        return None
    body = json.dumps(envelope["body"], ensure_ascii=False, separators=(",", ":"))
    return route, body.encode("utf-8")


class Endpoint:
    """Where the server lives: LIVE_MEMORY_HOST/PORT (a wildcard bind is reached on loopback)."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self.environ = environ
        self.host, self.port, self.authority = identity.address(environ)
        self.token = environ.get("LIVE_MEMORY_TOKEN", "").strip()

    def post(self, path: str, body: bytes, timeout_s: float = POST_TIMEOUT_S) -> str:
        """DELIVERED (2xx), REFUSED (4xx: retrying cannot help) or FAILED (spool it). The
        token and body go only on a connection whose server proved it is ours; a squatter
        gets the challenge alone and the body waits in the (private) spool."""
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {self.authority}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            "Connection: close\r\n"
        )
        if self.token:
            head += f"Authorization: Bearer {self.token}\r\n"
        try:
            sock, _ = identity.open_verified(self.environ, self.token, timeout_s)
        except identity.NotOurServer as exc:
            sys.stderr.write(f"live-memory notify: {exc}\n")
            return FAILED
        except OSError:
            return FAILED
        try:
            with sock:
                sock.sendall(head.encode("latin-1") + b"\r\n" + body)
                reply = b""
                while len(reply) < REPLY_MAX_BYTES:  # to EOF: Connection: close
                    chunk = sock.recv(4096)
                    if not chunk:
                        break
                    reply += chunk
        except OSError:
            return FAILED
        parts = reply.split(b"\r\n", 1)[0].split()
        status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
        if 200 <= status < 300:
            return DELIVERED
        return REFUSED if 400 <= status < 500 else FAILED


class Spool:
    """A bounded JSONL queue of undelivered bodies, guarded by an flock'd side file."""

    def __init__(
        self, directory: str, max_events: int = SPOOL_MAX_EVENTS, max_bytes: int = SPOOL_MAX_BYTES
    ) -> None:
        self.directory = directory
        self.path = os.path.join(directory, "events.jsonl")
        self.max_events = max_events
        self.max_bytes = max_bytes

    @classmethod
    def default(cls, environ: Mapping[str, str]) -> Spool:
        base = environ.get("CLAUDE_PLUGIN_DATA", "").strip()
        home = environ.get("HOME") or os.path.expanduser("~")
        root = base or os.path.join(home, ".local", "share", "live-memory")
        return cls(os.path.join(root, "spool"))

    def has_events(self) -> bool:
        try:
            return os.stat(self.path).st_size > 0
        except OSError:
            return False

    @contextmanager
    def locked(self, wait_s: float = SPOOL_LOCK_WAIT_S) -> Iterator[bool]:
        """Yields True holding the lock, False when it could not be had in `wait_s`."""
        os.makedirs(self.directory, exist_ok=True)
        fd = os.open(os.path.join(self.directory, ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + wait_s
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        yield False
                        return
                    time.sleep(0.01)
            yield True
        finally:
            os.close(fd)

    def read(self) -> list[bytes]:
        try:
            with open(self.path, "rb") as handle:
                return [line for line in handle.read().split(b"\n") if line.strip()]
        except OSError:
            return []

    def write(self, lines: list[bytes]) -> None:
        """Replace the spool with `lines`, oldest dropped to fit the bounds. Hold the lock."""
        lines = lines[-self.max_events :] if self.max_events > 0 else []
        total = sum(len(line) + 1 for line in lines)
        while lines and total > self.max_bytes:
            total -= len(lines[0]) + 1
            lines = lines[1:]
        if not lines:
            if os.path.exists(self.path):
                os.unlink(self.path)
            return
        tmp = os.path.join(self.directory, f".events.{os.getpid()}.tmp")
        with open(tmp, "wb") as handle:
            handle.write(b"".join(line + b"\n" for line in lines))
        os.replace(tmp, self.path)


def deliver(route: str, body: bytes, endpoint: Endpoint, spool: Spool) -> str:
    """Send `body` to `route` (after any spooled bodies, in order); spool what was not sent."""
    line = wrap(route, body)
    timeout_s = ROUTE_TIMEOUTS_S[route]
    if not spool.has_events():
        outcome = endpoint.post(route, body, timeout_s)
        if outcome == FAILED:
            with spool.locked() as held:
                if held:
                    spool.write(queue_after(spool.read(), route, line))
        return outcome
    with spool.locked() as held:
        if not held:
            return endpoint.post(route, body, timeout_s)
        pending = spool.read()
        sent = 0
        for spooled in pending:
            target = unwrap(spooled)
            if target is not None:
                spooled_route, spooled_body = target
                timeout = ROUTE_TIMEOUTS_S[spooled_route]
                if endpoint.post(spooled_route, spooled_body, timeout) == FAILED:
                    break
            sent += 1
        if sent < len(pending):
            spool.write(queue_after(pending[sent:], route, line))
            return FAILED
        outcome = endpoint.post(route, body, timeout_s)
        spool.write([line] if outcome == FAILED else [])
        return outcome


def queue_after(pending: list[bytes], route: str, line: bytes) -> list[bytes]:
    """`pending` then `line`. Stop fires after every turn: an enqueue of the same transcript
    replaces the older one (the server reads the file when it gets it), so a long session with
    the server down keeps one line, not one per turn."""
    if route != NOTIFY_ROUTE:
        pending = [spooled for spooled in pending if spooled != line]
    return [*pending, line]


def run(stdin: bytes, environ: Mapping[str, str], agent: str = CLAUDE_CODE) -> str | None:
    payload = json.loads(stdin or b"null")
    if not isinstance(payload, dict):
        return None
    spec = AGENTS.get(agent)
    if spec is not None and spec.events.get(str(payload.get("hook_event_name"))) == "stop":
        route, body = ENQUEUE_ROUTE, build_enqueue(payload)
    else:
        route, body = NOTIFY_ROUTE, build_body(payload, agent)
    if body is None:
        return None
    data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return deliver(route, data, Endpoint(environ), Spool.default(environ))


def main() -> int:
    agent = sys.argv[1] if len(sys.argv) > 1 else CLAUDE_CODE
    stdin = sys.stdin.buffer.read()
    identity.mark_fired(os.environ, agent)
    try:
        run(stdin, os.environ, agent)
    except Exception as exc:  # a hook must never fail or block the agent; say why on stderr
        sys.stderr.write(f"live-memory notify: {type(exc).__name__}: {exc}\n")
    spec = AGENTS.get(agent)
    if spec is not None and spec.reply:
        try:
            event = json.loads(stdin or b"null").get("hook_event_name")
        except (ValueError, AttributeError):
            event = None
        reply = spec.reply.get(str(event))
        if reply:
            sys.stdout.write(reply + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""One source file's symbols: definitions (name, kind, path:line, signature, first doc line),
the names it references and the modules it imports. Pure: bytes in, data out.

Signatures, doc lines and imports are redacted here, before they are stored in the data
directory (a key in a default argument or a docstring must not land on disk), and again as a
whole on every way out to the model (core map, lookups, find_symbol, outline), which also covers
an index written before this rule.
tree-sitter is error-tolerant, so a file with syntax errors still yields what parses; a binary
or over-cap file yields nothing (and says why). Every list is capped (named constants), so a
hostile file costs bounded time and memory beyond the parse itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import tree_sitter

from live_memory.config import constants as C
from live_memory.hygiene import looks_binary, redact_secrets
from live_memory.index.languages import Grammar, grammar_for, language_of

__all__ = ["Definition", "FileSymbols", "extract_symbols"]

_CONTAINERS = frozenset({"class", "struct", "interface", "trait", "impl", "enum"})
_BODY_FIELDS = ("body", "value")
_SPACE = re.compile(r"\s+")
_COMMENT_MARKS = re.compile(r"^\s*(?:/\*\*?|\*/|\*|///?|//!|#+|--)\s?")
_COMMENT_END = re.compile(r"\s*\*/\s*$")
# Nodes that wrap a definition on its own line: the doc comment sits above the wrapper.
_WRAPPERS = frozenset(
    {
        "export_statement",
        "type_declaration",
        "template_declaration",
        "ambient_declaration",
        "lexical_declaration",
        "variable_declaration",
        "variable_declarator",
        "decorated_definition",
    }
)
# When two patterns match one node, the more specific kind wins (a Go struct is a type_spec).
_GENERIC_KINDS = frozenset({"type"})
_GO_RECEIVER = re.compile(r"\(\s*(?:\w+\s+)?\*?\s*(\w+)")


@dataclass(frozen=True, slots=True)
class Definition:
    name: str
    qualified: str
    """`Container.name` inside a class/struct/impl/interface, else the name."""
    kind: str
    line: int
    signature: str
    doc: str


@dataclass(frozen=True, slots=True)
class FileSymbols:
    language: str | None
    definitions: tuple[Definition, ...] = ()
    references: frozenset[str] = frozenset()
    imports: tuple[str, ...] = ()
    skipped: str | None = None
    """Why nothing was extracted ("binary", "too large", "not source"), else None."""
    syntax_errors: bool = False


def extract_symbols(path: str, data: bytes) -> FileSymbols:
    """The symbols of `data`, the content of the workspace file `path`."""
    language = language_of(path)
    if language is None:
        return FileSymbols(None, skipped="not source")
    if len(data) > C.INDEX_MAX_FILE_BYTES:
        return FileSymbols(language, skipped="too large")
    if looks_binary(data[: C.BINARY_SNIFF_BYTES]):
        return FileSymbols(language, skipped="binary")
    grammar = grammar_for(language)
    tree = grammar.parser().parse(data)
    root = tree.root_node
    definitions, imports = _redacted(_definitions(grammar, root, data), _imports(grammar, root))
    return FileSymbols(
        language,
        definitions=definitions,
        references=_references(grammar, root),
        imports=imports,
        syntax_errors=root.has_error,
    )


def _redacted(
    definitions: tuple[Definition, ...], imports: tuple[str, ...]
) -> tuple[tuple[Definition, ...], tuple[str, ...]]:
    """Secrets masked in every signature, doc line and import, then each cut to its cap.

    Redacting before the cut matters: a key cut in half no longer has its recognisable shape.
    Every text is one line (whitespace collapsed, first doc line), and redaction keeps the line
    count, so one call over the joined lines costs one pass instead of one per definition.
    """
    texts = [t for d in definitions for t in (d.signature, d.doc)]
    texts.extend(imports)
    if not texts:
        return definitions, imports
    lines = redact_secrets("\n".join(texts))[0].split("\n")
    if len(lines) != len(texts):  # cannot happen (redaction keeps lines); never store raw
        lines = [redact_secrets(t)[0] for t in texts]
    out = tuple(
        replace(
            d,
            signature=_cut(lines[2 * i], C.INDEX_SIGNATURE_MAX_CHARS),
            doc=lines[2 * i + 1][: C.INDEX_DOC_MAX_CHARS],
        )
        for i, d in enumerate(definitions)
    )
    start = 2 * len(definitions)
    return out, tuple(line[: C.INDEX_SIGNATURE_MAX_CHARS] for line in lines[start:])


def _cut(text: str, cap: int) -> str:
    return text if len(text) <= cap else text[: cap - 1] + "…"


def _text(node: tree_sitter.Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def _definitions(grammar: Grammar, root: tree_sitter.Node, data: bytes) -> tuple[Definition, ...]:
    found: dict[int, tuple[str, tree_sitter.Node, tree_sitter.Node]] = {}
    cursor = tree_sitter.QueryCursor(grammar.defs)
    for _, captures in cursor.matches(root):
        names = captures.get("name")
        if not names:
            continue
        for kind, nodes in captures.items():
            if kind == "name":
                continue
            node = nodes[0]
            known = found.get(node.id)
            if known is None or (known[0] in _GENERIC_KINDS and kind not in _GENERIC_KINDS):
                found[node.id] = (kind, node, names[0])
        if len(found) >= C.INDEX_MAX_DEFS_PER_FILE * 2:
            break
    ordered = sorted(found.values(), key=lambda item: item[1].start_byte)
    containers: list[tuple[int, str]] = []  # (end byte, name) of the open containers
    out: list[Definition] = []
    for matched, node, name_node in ordered:
        kind = matched
        while containers and containers[-1][0] <= node.start_byte:
            containers.pop()
        name = _text(name_node).strip()
        short = name.rsplit("::", 1)[-1].rsplit(".", 1)[-1] or name
        owner = containers[-1][1] if containers else ""
        if grammar.name == "go" and kind == "method":
            receiver = node.child_by_field_name("receiver")
            match = _GO_RECEIVER.match(_text(receiver)) if receiver is not None else None
            owner = match.group(1) if match else owner
        if kind in ("function",) and owner and containers:
            kind = "method"
        if kind in _CONTAINERS:
            containers.append((node.end_byte, short))
        if kind == "impl":
            continue
        qualified = f"{owner}.{short}" if owner and owner != short else name.replace("::", ".")
        out.append(
            Definition(
                name=short,
                qualified=qualified,
                kind=kind,
                line=node.start_point[0] + 1,
                signature=_signature(node, data),
                doc=_doc(grammar, node),
            )
        )
        if len(out) >= C.INDEX_MAX_DEFS_PER_FILE:
            break
    return tuple(out)


def _signature(node: tree_sitter.Node, data: bytes) -> str:
    """The definition's head: from its start to its body (the first line when it has none)."""
    end = node.end_byte
    for field in _BODY_FIELDS:
        body = node.child_by_field_name(field)
        if body is not None and body.start_byte > node.start_byte:
            end = body.start_byte
            break
    else:
        newline = data.find(b"\n", node.start_byte, end)
        end = newline if newline >= 0 else end
    end = min(end, node.start_byte + C.INDEX_SIGNATURE_MAX_CHARS * 4)
    head = data[node.start_byte : end].decode("utf-8", "replace")
    # Cut to its cap in _redacted, after redaction (the read above is already bounded).
    return _SPACE.sub(" ", head).strip().rstrip("{:= ").strip()


def _doc(grammar: Grammar, node: tree_sitter.Node) -> str:
    """The first line of the docstring (Python) or of the comment right above."""
    if grammar.name == "python":
        body = node.child_by_field_name("body")
        first = body.named_children[0] if body is not None and body.named_children else None
        if first is not None and first.type == "expression_statement" and first.named_children:
            string = first.named_children[0]
            if string.type == "string":
                parts = [c for c in string.named_children if c.type == "string_content"]
                return _first_line(_text(parts[0])) if parts else ""
        return ""
    anchor = node
    # The comment sits above the outermost node starting on the same line (export, decorators,
    # Go's `type` declaration around the spec).
    while anchor.parent is not None and anchor.parent.type in _WRAPPERS:
        anchor = anchor.parent
    previous = anchor.prev_named_sibling
    if previous is None or "comment" not in previous.type:
        return ""
    if previous.end_point[0] < anchor.start_point[0] - 1:
        return ""
    return _first_line(_COMMENT_MARKS.sub("", _text(previous)))


def _first_line(text: str) -> str:
    for raw in text.splitlines():
        line = _COMMENT_END.sub("", _COMMENT_MARKS.sub("", raw)).strip()
        if line:
            # Bounded here, cut to INDEX_DOC_MAX_CHARS after redaction (_redacted).
            return line[: C.INDEX_DOC_MAX_CHARS * 4]
    return ""


def _references(grammar: Grammar, root: tree_sitter.Node) -> frozenset[str]:
    names: set[str] = set()
    cursor = tree_sitter.QueryCursor(grammar.refs)
    for node in cursor.captures(root).get("ref", ()):
        names.add(_text(node))
        if len(names) >= C.INDEX_MAX_REFS_PER_FILE:
            break
    return frozenset(names)


def _imports(grammar: Grammar, root: tree_sitter.Node) -> tuple[str, ...]:
    cursor = tree_sitter.QueryCursor(grammar.imports)
    seen: dict[str, None] = {}
    for node in cursor.captures(root).get("import", ()):
        text = _SPACE.sub(" ", _text(node)).strip("\"'<> ")
        if text:
            seen.setdefault(text[: C.INDEX_SIGNATURE_MAX_CHARS * 4], None)
        if len(seen) >= C.INDEX_MAX_REFS_PER_FILE // 10:
            break
    return tuple(seen)

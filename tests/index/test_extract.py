"""Definitions, references and imports per supported language, and bad input handled."""

from __future__ import annotations

import pytest

from live_memory.config import constants as C
from live_memory.index import LANGUAGES, extract_symbols, language_of


def _defs(path: str, source: str) -> dict[str, tuple[str, int, str, str]]:
    symbols = extract_symbols(path, source.encode())
    assert symbols.skipped is None
    return {d.qualified: (d.kind, d.line, d.signature, d.doc) for d in symbols.definitions}


def test_python_functions_classes_methods_with_signature_doc_and_line() -> None:
    source = (
        "import os\nfrom pkg.sub import thing\n\n@decorate\n"
        'def top(a, b: int = 3) -> str:\n    """Top doc line.\n\n    More."""\n'
        "    return helper(a)\n\nclass Foo(Base):\n    def method(self, x):\n"
        "        return self.other(x)\n"
    )
    defs = _defs("pkg/a.py", source)
    assert defs["top"] == ("function", 5, "def top(a, b: int = 3) -> str", "Top doc line.")
    assert defs["Foo"][:2] == ("class", 11)
    assert defs["Foo.method"][:3] == ("method", 12, "def method(self, x)")
    symbols = extract_symbols("pkg/a.py", source.encode())
    assert {"helper", "other", "Base", "decorate"} <= symbols.references
    assert symbols.imports == ("os", "pkg.sub")


def test_javascript_and_typescript() -> None:
    js = _defs(
        "web/a.js",
        'import x from "./lib/x.js";\n// Adds things.\n'
        "export function add(a, b) { return a + b; }\n"
        "class Widget extends Base {\n  render(props) { return h(props); }\n}\n"
        "const arrow = (q) => q * 2;\n",
    )
    assert js["add"] == ("function", 3, "function add(a, b)", "Adds things.")
    assert js["Widget.render"][:2] == ("method", 5)
    assert js["arrow"][0] == "function"
    ts = _defs(
        "web/a.ts",
        "export interface Shape { area(): number; }\nexport type Id = string;\n"
        "export enum Color { Red }\nexport class Animal { move(d: number): void {} }\n"
        "function f<T>(x: T): T { return x; }\n",
    )
    assert ts["Shape"][0] == "interface" and ts["Shape.area"][0] == "method"
    assert ts["Id"][0] == "type" and ts["Color"][0] == "enum"
    assert ts["Animal.move"][:3] == ("method", 4, "move(d: number): void")
    assert ts["f"][2] == "function f<T>(x: T): T"
    assert language_of("ui/App.tsx") == "tsx"
    assert "App" in _defs("ui/App.tsx", "export function App() { return <div/>; }\n")


def test_go_and_rust() -> None:
    go = _defs(
        "srv/a.go",
        'package main\nimport "fmt"\n// Server serves.\ntype Server struct { port int }\n'
        "type Handler interface { Serve() }\n// Start starts it.\n"
        'func (s *Server) Start(port int) error { return fmt.Errorf("x") }\nfunc main() {}\n',
    )
    assert go["Server"] == ("struct", 4, "Server struct { port int }", "Server serves.")
    assert go["Handler"][0] == "interface"
    assert go["Server.Start"] == (
        "method",
        7,
        "func (s *Server) Start(port int) error",
        "Start starts it.",
    )
    rust = _defs(
        "src/lib.rs",
        "use std::collections::HashMap;\n/// A point.\npub struct Point { x: i32 }\n"
        "pub trait Shape { fn area(&self) -> f64; }\nimpl Point {\n    /// Make one.\n"
        "    pub fn new(x: i32) -> Self { Point { x } }\n}\nfn main() {}\n",
    )
    assert rust["Point"] == ("struct", 3, "pub struct Point", "A point.")
    assert rust["Shape"][0] == "trait" and rust["Shape.area"][0] == "method"
    assert rust["Point.new"] == ("method", 7, "pub fn new(x: i32) -> Self", "Make one.")
    assert extract_symbols("src/lib.rs", b"use std::io;\n").imports == ("std::io",)


def test_java_c_and_cpp() -> None:
    java = _defs("A.java", "public class App {\n  public static void main(String[] a) {}\n}\n")
    assert java["App"][0] == "class" and java["App.main"][:2] == ("method", 2)
    c = _defs(
        "a.c",
        "#include <stdio.h>\nint add(int a, int b) { return a + b; }\nstruct pt { int x; };\n",
    )
    assert c["add"][:3] == ("function", 2, "int add(int a, int b)")
    assert c["pt"][0] == "struct"
    cpp = _defs(
        "a.cpp", "namespace ns { class K { public: void m(); }; }\nint f(int x) { return x; }\n"
    )
    assert cpp["ns"][0] == "module" and cpp["K"][0] == "class" and cpp["f"][0] == "function"
    assert set(LANGUAGES) >= {"python", "javascript", "typescript", "go", "rust", "java", "c"}


def test_syntax_errors_still_yield_what_parses() -> None:
    symbols = extract_symbols(
        "bad.py", b"def broken(:\n  pass\nclass Ok:\n  def fine(self): pass\n"
    )
    assert symbols.syntax_errors
    assert {d.qualified for d in symbols.definitions} >= {"Ok", "Ok.fine"}
    garbage = extract_symbols("junk.go", b"}}}{{{ func ((( type ]]] \n" * 200)
    assert garbage.skipped is None and garbage.syntax_errors


@pytest.mark.parametrize(
    ("path", "data", "why"),
    [
        ("lib.py", b"\x00\x01\x02ELF" * 100, "binary"),
        ("big.js", b"var a = 1;\n" * (C.INDEX_MAX_FILE_BYTES // 10), "too large"),
        ("notes.txt", b"def not_code(): pass\n", "not source"),
    ],
)
def test_binary_huge_and_non_source_are_skipped(path: str, data: bytes, why: str) -> None:
    symbols = extract_symbols(path, data)
    assert symbols.skipped == why and symbols.definitions == ()


def test_caps_hold_on_hostile_input() -> None:
    many = "".join(f"def f{i}(): pass\n" for i in range(C.INDEX_MAX_DEFS_PER_FILE * 3))
    assert len(extract_symbols("many.py", many.encode()).definitions) == C.INDEX_MAX_DEFS_PER_FILE
    long_sig = "def f(" + ", ".join(f"a{i}" for i in range(500)) + "): pass\n"
    (d,) = extract_symbols("long.py", long_sig.encode()).definitions
    assert len(d.signature) <= C.INDEX_SIGNATURE_MAX_CHARS
    undecodable = extract_symbols("x.py", b"def caf\xe9(): pass\n")
    assert undecodable.skipped is None

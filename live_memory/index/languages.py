"""The languages the symbol index parses: file extensions, grammars and tree-sitter queries.

Every grammar is a per-language wheel that ships its compiled parser (tree-sitter-python,
-javascript, ...), so nothing is downloaded at run time. A grammar is loaded on first use and
its queries compiled once per process.

Definition queries capture the defining node as `@<kind>` and its name as `@name`; kinds are
function, method, class, struct, interface, trait, enum, type, module, macro, plus `impl` (a
Rust impl block: a container that qualifies its methods, never a definition itself).
Reference queries capture called and named identifiers as `@ref` (aider's repo-map idea: a
definition many files mention is central), import queries the imported module as `@import`.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass

import tree_sitter
import tree_sitter_c
import tree_sitter_cpp
import tree_sitter_go
import tree_sitter_java
import tree_sitter_javascript
import tree_sitter_python
import tree_sitter_rust
import tree_sitter_typescript

__all__ = ["LANGUAGES", "Grammar", "grammar_for", "language_of"]

_PY_DEFS = """
(function_definition name: (identifier) @name) @function
(class_definition name: (identifier) @name) @class
"""
_PY_REFS = """
(call function: (identifier) @ref)
(call function: (attribute attribute: (identifier) @ref))
(argument_list (identifier) @ref)
(type (identifier) @ref)
(decorator (identifier) @ref)
"""
_PY_IMPORTS = """
(import_statement name: (dotted_name) @import)
(import_statement name: (aliased_import name: (dotted_name) @import))
(import_from_statement module_name: (_) @import)
"""

_JS_DEFS = """
(function_declaration name: (_) @name) @function
(generator_function_declaration name: (_) @name) @function
(class_declaration name: (_) @name) @class
(method_definition name: (_) @name) @method
(variable_declarator
  name: (identifier) @name value: [(arrow_function) (function_expression)]) @function
"""
_JS_REFS = """
(call_expression function: (identifier) @ref)
(call_expression function: (member_expression property: (property_identifier) @ref))
(new_expression constructor: (identifier) @ref)
(class_heritage (identifier) @ref)
"""
_JS_IMPORTS = """
(import_statement source: (string (string_fragment) @import))
"""
_TS_DEFS = (
    _JS_DEFS
    + """
(abstract_class_declaration name: (_) @name) @class
(interface_declaration name: (_) @name) @interface
(type_alias_declaration name: (_) @name) @type
(enum_declaration name: (_) @name) @enum
(function_signature name: (_) @name) @function
(method_signature name: (_) @name) @method
(abstract_method_signature name: (_) @name) @method
"""
)
_TS_REFS = """
(call_expression function: (identifier) @ref)
(call_expression function: (member_expression property: (property_identifier) @ref))
(new_expression constructor: (identifier) @ref)
(type_identifier) @ref
"""

_GO_DEFS = """
(function_declaration name: (identifier) @name) @function
(method_declaration name: (field_identifier) @name) @method
(type_spec name: (type_identifier) @name type: (struct_type)) @struct
(type_spec name: (type_identifier) @name type: (interface_type)) @interface
(type_spec name: (type_identifier) @name) @type
"""
_GO_REFS = """
(call_expression function: (identifier) @ref)
(call_expression function: (selector_expression field: (field_identifier) @ref))
(type_identifier) @ref
"""
_GO_IMPORTS = """
(import_spec path: (interpreted_string_literal) @import)
"""

_RUST_DEFS = """
(function_item name: (identifier) @name) @function
(function_signature_item name: (identifier) @name) @function
(struct_item name: (type_identifier) @name) @struct
(enum_item name: (type_identifier) @name) @enum
(union_item name: (type_identifier) @name) @struct
(trait_item name: (type_identifier) @name) @trait
(type_item name: (type_identifier) @name) @type
(mod_item name: (identifier) @name) @module
(macro_definition name: (identifier) @name) @macro
(impl_item type: (_) @name) @impl
"""
_RUST_REFS = """
(call_expression function: (identifier) @ref)
(call_expression function: (field_expression field: (field_identifier) @ref))
(call_expression function: (scoped_identifier name: (identifier) @ref))
(macro_invocation macro: (identifier) @ref)
(type_identifier) @ref
"""
_RUST_IMPORTS = """
(use_declaration argument: (_) @import)
"""

_JAVA_DEFS = """
(class_declaration name: (identifier) @name) @class
(interface_declaration name: (identifier) @name) @interface
(enum_declaration name: (identifier) @name) @enum
(record_declaration name: (identifier) @name) @class
(method_declaration name: (identifier) @name) @method
(constructor_declaration name: (identifier) @name) @method
"""
_JAVA_REFS = """
(method_invocation name: (identifier) @ref)
(object_creation_expression type: (type_identifier) @ref)
(type_identifier) @ref
"""
_JAVA_IMPORTS = """
(import_declaration (scoped_identifier) @import)
"""

_C_DEFS = """
(function_definition declarator: (function_declarator declarator: (identifier) @name)) @function
(function_definition
  declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
  @function
(struct_specifier name: (type_identifier) @name body: (_)) @struct
(union_specifier name: (type_identifier) @name body: (_)) @struct
(enum_specifier name: (type_identifier) @name body: (_)) @enum
(type_definition declarator: (type_identifier) @name) @type
"""
_C_REFS = """
(call_expression function: (identifier) @ref)
(type_identifier) @ref
"""
_C_IMPORTS = """
(preproc_include path: (_) @import)
"""
_CPP_DEFS = """
(function_definition declarator: (function_declarator declarator: (identifier) @name)) @function
(function_definition declarator: (function_declarator declarator: (field_identifier) @name)) @method
(function_definition
  declarator: (function_declarator declarator: (qualified_identifier) @name)) @method
(function_definition
  declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
  @function
(function_definition
  declarator: (reference_declarator (function_declarator declarator: (_) @name))) @function
(class_specifier name: (type_identifier) @name body: (_)) @class
(struct_specifier name: (type_identifier) @name body: (_)) @struct
(enum_specifier name: (type_identifier) @name body: (_)) @enum
(type_definition declarator: (type_identifier) @name) @type
(alias_declaration name: (type_identifier) @name) @type
(namespace_definition name: (namespace_identifier) @name) @module
"""
_CPP_REFS = """
(call_expression function: (identifier) @ref)
(call_expression function: (field_expression field: (field_identifier) @ref))
(call_expression function: (qualified_identifier name: (identifier) @ref))
(type_identifier) @ref
"""


@dataclass(frozen=True, slots=True)
class _Spec:
    name: str
    extensions: tuple[str, ...]
    language: Callable[[], object]
    defs: str
    refs: str
    imports: str


_SPECS: tuple[_Spec, ...] = (
    _Spec("python", (".py", ".pyi"), tree_sitter_python.language, _PY_DEFS, _PY_REFS, _PY_IMPORTS),
    _Spec(
        "javascript",
        (".js", ".mjs", ".cjs", ".jsx"),
        tree_sitter_javascript.language,
        _JS_DEFS,
        _JS_REFS,
        _JS_IMPORTS,
    ),
    _Spec(
        "typescript",
        (".ts", ".mts", ".cts"),
        tree_sitter_typescript.language_typescript,
        _TS_DEFS,
        _TS_REFS,
        _JS_IMPORTS,
    ),
    _Spec("tsx", (".tsx",), tree_sitter_typescript.language_tsx, _TS_DEFS, _TS_REFS, _JS_IMPORTS),
    _Spec("go", (".go",), tree_sitter_go.language, _GO_DEFS, _GO_REFS, _GO_IMPORTS),
    _Spec("rust", (".rs",), tree_sitter_rust.language, _RUST_DEFS, _RUST_REFS, _RUST_IMPORTS),
    _Spec("java", (".java",), tree_sitter_java.language, _JAVA_DEFS, _JAVA_REFS, _JAVA_IMPORTS),
    _Spec("c", (".c", ".h"), tree_sitter_c.language, _C_DEFS, _C_REFS, _C_IMPORTS),
    _Spec(
        "cpp",
        (".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++"),
        tree_sitter_cpp.language,
        _CPP_DEFS,
        _CPP_REFS,
        _C_IMPORTS,
    ),
)

LANGUAGES: tuple[str, ...] = tuple(spec.name for spec in _SPECS)
_BY_EXTENSION = {ext: spec for spec in _SPECS for ext in spec.extensions}
_BY_NAME = {spec.name: spec for spec in _SPECS}


def language_of(path: str) -> str | None:
    """The language a path's extension names, or None (not a source file we parse)."""
    dot = path.rfind(".")
    if dot < 0 or "/" in path[dot:]:
        return None
    spec = _BY_EXTENSION.get(path[dot:].lower())
    return spec.name if spec else None


@dataclass(frozen=True, slots=True)
class Grammar:
    """A loaded language: its parser factory and compiled queries (shared, read-only)."""

    name: str
    language: tree_sitter.Language
    defs: tree_sitter.Query
    refs: tree_sitter.Query
    imports: tree_sitter.Query

    def parser(self) -> tree_sitter.Parser:
        return tree_sitter.Parser(self.language)


_LOCK = threading.Lock()


@functools.cache
def _load(name: str) -> Grammar:
    spec = _BY_NAME[name]
    language = tree_sitter.Language(spec.language())
    return Grammar(
        name,
        language,
        tree_sitter.Query(language, spec.defs),
        tree_sitter.Query(language, spec.refs),
        tree_sitter.Query(language, spec.imports),
    )


def grammar_for(name: str) -> Grammar:
    """The loaded grammar of `name` (one of LANGUAGES); compiled once per process."""
    with _LOCK:  # functools.cache may run the loader twice in two threads; once is enough
        return _load(name)

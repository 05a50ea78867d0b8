; Tackle's additions to tree-sitter-rust's own tags query (which comes after these, so where
; both name the same node, these patterns win). Whether a `fn` is a method is decided later,
; from the enclosing `impl` or `trait`.

; `impl` blocks, named after the implementing type: their functions are its methods.
(impl_item type: (type_identifier) @name) @definition.impl
(impl_item type: (generic_type type: (type_identifier) @name)) @definition.impl
(impl_item type: (scoped_type_identifier name: (type_identifier) @name)) @definition.impl
(impl_item type: (generic_type type: (scoped_type_identifier name: (type_identifier) @name))) @definition.impl

; Implemented traits that are generic or a path (the stock query names plain ones).
(impl_item trait: (generic_type type: (type_identifier) @name)) @reference.implementation
(impl_item trait: (scoped_type_identifier name: (type_identifier) @name)) @reference.implementation

; Trait methods without a body.
(function_signature_item name: (identifier) @name) @definition.method

; Type aliases are types, not classes.
(type_item name: (type_identifier) @name) @definition.type

; Constants and statics.
(const_item name: (identifier) @name) @definition.constant
(static_item name: (identifier) @name) @definition.constant

; Struct fields.
(field_declaration name: (field_identifier) @name) @definition.field

; Calls of paths (`Type::new()`, `module::f()`), which the stock query leaves out.
(call_expression function: (scoped_identifier name: (identifier) @name)) @reference.call

; `use` declarations.
(use_declaration argument: (_) @name) @reference.import

; Types named in signatures, fields, bindings, paths and struct literals (the stock query has
; no type references). These come after the `impl` patterns above, which claim an `impl`'s
; own type first.
(generic_type type: (type_identifier) @name) @reference.type
(scoped_type_identifier name: (type_identifier) @name) @reference.type
(reference_type type: (type_identifier) @name) @reference.type
(parameter type: (type_identifier) @name) @reference.type
(function_item return_type: (type_identifier) @name) @reference.type
(function_signature_item return_type: (type_identifier) @name) @reference.type
(field_declaration type: (type_identifier) @name) @reference.type
(let_declaration type: (type_identifier) @name) @reference.type
(type_arguments (type_identifier) @name) @reference.type
(struct_expression name: (type_identifier) @name) @reference.type
(scoped_identifier path: (identifier) @name) @reference.type

; Tackle's additions to tree-sitter-c's own tags query (which comes after these, so where
; both name the same node, these patterns win).

; Function definitions, whole (the stock query tags the declarator only), with pointer
; declarators unwrapped: `int *f(void) { ... }` is `f`.
(function_definition
  declarator: (function_declarator declarator: (identifier) @name)) @definition.function
(function_definition
  declarator: (_ (function_declarator declarator: (identifier) @name))) @definition.function
(function_definition
  declarator: (_ (_ (function_declarator declarator: (identifier) @name)))) @definition.function

; Every other function declarator (prototypes, parameters) is not a definition.
(function_declarator declarator: (identifier) @ignore)

; Unions with a body are classes; a union, struct or enum named without a body is a use.
(union_specifier name: (type_identifier) @name body: (_)) @definition.class
(union_specifier name: (type_identifier) @ignore !body)
(enum_specifier name: (type_identifier) @ignore !body)

; Struct and union members.
(field_declaration declarator: (field_identifier) @name) @definition.field

; Included headers.
(preproc_include path: (_) @name) @reference.import

; Calls (the stock query has no references).
(call_expression function: (identifier) @name) @reference.call
(call_expression function: (field_expression field: (field_identifier) @name)) @reference.call

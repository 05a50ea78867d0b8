; Tackle's additions to tree-sitter-cpp's own tags query (which comes after these, so where
; both name the same node, these patterns win).

; `f() = delete;` and `f() = default;` have no body of their own: not definitions (they come
; first, so they win over the patterns below).
(function_definition
  declarator: (function_declarator declarator: (_) @ignore)
  [(delete_method_clause) (default_method_clause)])
(function_definition
  declarator: (_ (function_declarator declarator: (_) @ignore))
  [(delete_method_clause) (default_method_clause)])

; `void f() LOCKS_EXCLUDED(mu) { … }`: an annotation macro between the declarator and the
; body. tree-sitter reads the macro as the function and `f()` as an error (or, with the macro
; on a line of its own after `A::f()`, `A::f()` as a declaration missing its `;`): the
; function is `f`, and the macro is not a definition. In a class body, `f()` becomes a member
; declaration missing its `;`.
(function_definition
  (ERROR (function_declarator declarator: (identifier) @name))) @definition.function
(function_definition
  (ERROR (function_declarator declarator: [(field_identifier) (qualified_identifier)] @name))) @definition.method
(function_definition
  (ERROR (function_declarator))
  declarator: (function_declarator declarator: (_) @ignore))
((declaration
   declarator: (function_declarator declarator: (qualified_identifier) @name)
   (MISSING ";"))
 .
 (function_definition !type declarator: (function_declarator declarator: (identifier))) @definition.method)
((declaration (MISSING ";"))
 .
 (function_definition !type declarator: (function_declarator declarator: (identifier) @ignore)))
((field_declaration
   declarator: (function_declarator declarator: (field_identifier) @name)
   (MISSING ";"))
 .
 (function_definition !type declarator: (function_declarator declarator: (identifier))) @definition.method)
((field_declaration (MISSING ";"))
 .
 (function_definition !type declarator: (function_declarator declarator: (identifier) @ignore)))

; Function definitions, whole (the stock query tags the declarator only), with pointer and
; reference declarators unwrapped. In a class body they are methods; `A::f` is a method of
; `A` (the whole qualified name is captured and split later).
(function_definition
  declarator: (function_declarator declarator: (identifier) @name)) @definition.function
(function_definition
  declarator: (_ (function_declarator declarator: (identifier) @name))) @definition.function
(function_definition
  declarator: (_ (_ (function_declarator declarator: (identifier) @name)))) @definition.function
(function_definition
  declarator: (function_declarator
    declarator: [(field_identifier) (destructor_name) (operator_name)] @name)) @definition.method
(function_definition
  declarator: (_ (function_declarator
    declarator: [(field_identifier) (destructor_name) (operator_name)] @name))) @definition.method
(function_definition
  declarator: (function_declarator declarator: (qualified_identifier) @name)) @definition.method
(function_definition
  declarator: (_ (function_declarator declarator: (qualified_identifier) @name))) @definition.method
(function_definition
  declarator: (_ (_ (function_declarator declarator: (qualified_identifier) @name)))) @definition.method

; Every other function declarator (prototypes, member declarations) is not a definition.
(function_declarator declarator: (identifier) @ignore)
(function_declarator declarator: (field_identifier) @ignore)
(function_declarator declarator: (qualified_identifier name: (identifier) @ignore))

; Conversion operators (`operator bool() const { … }`), named `operator bool`.
(function_definition declarator: (operator_cast) @name) @definition.method
(function_definition declarator: (qualified_identifier name: (operator_cast)) @name) @definition.method

; Template specializations (`template <> class Box<int> { … }`) are definitions of the class.
(class_specifier name: (template_type name: (type_identifier) @name) body: (_)) @definition.class
(struct_specifier name: (template_type name: (type_identifier) @name) body: (_)) @definition.class

; A class, union or enum named without a body is a use, not a definition.
(class_specifier name: (type_identifier) @ignore !body)
(union_specifier name: (type_identifier) @name body: (_)) @definition.class
(union_specifier name: (type_identifier) @ignore !body)
(enum_specifier name: (type_identifier) @ignore !body)

; Namespaces qualify the names inside them.
(namespace_definition name: [(namespace_identifier) (nested_namespace_specifier)] @name) @definition.module

; Base classes.
(base_class_clause (type_identifier) @name @reference.inherits)
(base_class_clause (qualified_identifier name: (type_identifier) @name) @reference.inherits)
(base_class_clause (template_type name: (type_identifier) @name) @reference.inherits)

; Data members.
(field_declaration declarator: (field_identifier) @name) @definition.field

; Included headers.
(preproc_include path: (_) @name) @reference.import

; Calls and constructions (the stock query has no references).
(call_expression function: (identifier) @name) @reference.call
(call_expression function: (field_expression field: (field_identifier) @name)) @reference.call
(call_expression function: (qualified_identifier name: (identifier) @name)) @reference.call
(call_expression function: (template_function name: (identifier) @name)) @reference.call
(new_expression type: (type_identifier) @name) @reference.class

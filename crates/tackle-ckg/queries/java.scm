; Tackle's additions to tree-sitter-java's own tags query (which comes after these, so where
; both name the same node, these patterns win).

; Enums and records are classes; constructors are methods.
(enum_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(constructor_declaration name: (identifier) @name) @definition.method
(compact_constructor_declaration name: (identifier) @name) @definition.method

; Fields.
(field_declaration declarator: (variable_declarator name: (identifier) @name)) @definition.field

; The base class (the stock query calls it a class reference, like `new X()`).
(superclass (type_identifier) @name @reference.inherits)
(superclass (generic_type (type_identifier) @name) @reference.inherits)
(super_interfaces (type_list (generic_type (type_identifier) @name) @reference.implementation))
(extends_interfaces (type_list (type_identifier) @name @reference.inherits))

; The package, which qualifies every name of the file.
(package_declaration [(identifier) (scoped_identifier)] @name) @definition.package

; Imports.
(import_declaration [(identifier) (scoped_identifier)] @name) @reference.import

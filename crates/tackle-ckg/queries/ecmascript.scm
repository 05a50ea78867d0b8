; Tackle's additions shared by JavaScript, TypeScript and TSX (they come before the stock
; tags queries, so where both name the same node, these patterns win).

; Constructors (the stock query leaves them out) and private methods.
((method_definition name: (property_identifier) @name) @definition.method
  (#eq? @name "constructor"))
(method_definition name: (private_property_identifier) @name) @definition.method
(method_definition name: (computed_property_name) @name) @definition.method

; Imported modules.
(import_statement source: (string (string_fragment) @name)) @reference.import

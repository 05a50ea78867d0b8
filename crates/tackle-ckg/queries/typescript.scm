; Tackle's additions for TypeScript and TSX (see ecmascript.scm for the shared ones; the
; JavaScript tags query runs too, since TypeScript's own covers only what JavaScript lacks).

; Class fields.
(public_field_definition name: [(property_identifier) (private_property_identifier)] @name) @definition.field

; Base classes, implemented and extended interfaces.
(extends_clause value: (identifier) @name @reference.inherits)
(extends_clause value: (member_expression property: (property_identifier) @name) @reference.inherits)
(implements_clause (type_identifier) @name @reference.implementation)
(implements_clause (generic_type name: (type_identifier) @name) @reference.implementation)
(extends_type_clause type: (type_identifier) @name @reference.inherits)
(extends_type_clause type: (generic_type name: (type_identifier) @name) @reference.inherits)

; Construct signatures of interfaces (`new (x: X): T;`), named `new`.
(construct_signature "new" @name) @definition.method

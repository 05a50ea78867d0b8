; Tackle's additions for JavaScript only (see ecmascript.scm for the shared ones).

; Class fields.
(field_definition property: [(property_identifier) (private_property_identifier)] @name) @definition.field

; Base classes.
(class_heritage (identifier) @name @reference.inherits)
(class_heritage (member_expression property: (property_identifier) @name) @reference.inherits)

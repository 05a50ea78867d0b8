; Tackle's additions to tree-sitter-python's own tags query (which comes after these, so
; where both name the same node, these patterns win). Methods and nested functions are told
; apart later, from the enclosing definition.

; A decorated definition starts at its first decorator.
(decorated_definition
  definition: (function_definition name: (identifier) @name)) @definition.function
(decorated_definition
  definition: (class_definition name: (identifier) @name)) @definition.class

; A name bound to a lambda is a function (a method in a class body).
(assignment left: (identifier) @name right: (lambda)) @definition.function

; Class attributes are the class's fields.
(class_definition
  body: (block
    (expression_statement
      (assignment left: (identifier) @name) @definition.field)))

; Base classes.
(class_definition
  superclasses: (argument_list (identifier) @name @reference.inherits))
(class_definition
  superclasses: (argument_list (attribute attribute: (identifier) @name) @reference.inherits))

; Imported modules.
(import_statement name: (dotted_name) @name @reference.import)
(import_statement name: (aliased_import name: (dotted_name) @name @reference.import))
(import_from_statement module_name: (dotted_name) @name @reference.import)
(import_from_statement module_name: (relative_import) @name @reference.import)

; Types named in annotations.
(type (identifier) @name) @reference.type
(type (attribute attribute: (identifier) @name)) @reference.type
(type (subscript value: (identifier) @name)) @reference.type

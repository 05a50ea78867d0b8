; Tackle's additions to tree-sitter-go's own tags query (which comes after these, so where
; both name the same node, these patterns win).

; Struct and interface types are classes (other named types stay types).
(type_spec name: (type_identifier) @name type: (struct_type)) @definition.class
(type_spec name: (type_identifier) @name type: (interface_type)) @definition.interface

; A method's receiver type: the method's parent.
(method_declaration
  receiver: (parameter_list
    (parameter_declaration
      type: [
        (type_identifier) @name
        (pointer_type (type_identifier) @name)
        (generic_type type: (type_identifier) @name)
        (pointer_type (generic_type type: (type_identifier) @name))
      ]))) @definition.receiver

; Methods of interfaces.
(method_elem name: (field_identifier) @name) @definition.method

; Struct fields.
(field_declaration name: (field_identifier) @name) @definition.field

; The package, which qualifies every name of the file.
(package_clause (package_identifier) @name) @definition.package

; Imported packages.
(import_spec path: [(interpreted_string_literal) (raw_string_literal)] @name) @reference.import

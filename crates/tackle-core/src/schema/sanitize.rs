//! Cleans a schema that came from outside (an MCP server, a config file) into something every
//! dialect can render: local `$ref`s inlined (cycles cut), single-variant combinators
//! unwrapped, `const` turned into `enum`, and a missing `type` inferred.

use serde_json::{Map, Value, json};

/// Something the sanitizer changed in a way that loses meaning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SanitizeWarning {
    /// A `$ref` pointed at itself through a cycle; it was replaced by a plain object schema.
    RecursiveRef(String),
    /// A `$ref` that is not local, or names nothing in the document.
    UnresolvedRef(String),
    /// Inlining the references would make the schema larger than `MAX_NODES`; the rest was
    /// cut to `{}` (any value).
    TooLarge,
}

impl std::fmt::Display for SanitizeWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SanitizeWarning::RecursiveRef(r) => {
                write!(f, "recursive $ref {r} was cut to a plain object")
            }
            SanitizeWarning::UnresolvedRef(r) => {
                write!(f, "$ref {r} could not be resolved and was dropped")
            }
            SanitizeWarning::TooLarge => {
                write!(
                    f,
                    "the schema grows past {MAX_NODES} nodes when its $refs are inlined; the rest was cut to {{}}"
                )
            }
        }
    }
}

/// Depth past which nesting is cut, so a hostile schema cannot exhaust the stack.
const MAX_DEPTH: usize = 64;

/// Schema nodes written at most. Inlining multiplies: thirty definitions that each name the
/// next twice are 2^30 nodes, so a few hundred bytes could exhaust memory.
pub const MAX_NODES: usize = 10_000;

/// Sanitizes `schema` (see the module docs). Idempotent.
pub fn sanitize(schema: Value) -> (Value, Vec<SanitizeWarning>) {
    let mut resolver = Resolver { root: &schema, stack: Vec::new(), warnings: Vec::new(), nodes: 0 };
    let mut out = resolver.resolve(&schema, 0);
    if let Value::Object(map) = &mut out {
        map.remove("$defs");
        map.remove("definitions");
    }
    (out, resolver.warnings)
}

/// One sanitizer run: the document its references point into, the references being inlined
/// (to cut cycles), what it warned about and how many nodes it wrote.
struct Resolver<'a> {
    root: &'a Value,
    stack: Vec<String>,
    warnings: Vec<SanitizeWarning>,
    nodes: usize,
}

impl Resolver<'_> {
    fn resolve(&mut self, node: &Value, depth: usize) -> Value {
        if depth > MAX_DEPTH {
            return json!({});
        }
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            if self.nodes == MAX_NODES + 1 {
                self.warnings.push(SanitizeWarning::TooLarge);
            }
            return json!({});
        }
        let map = match node {
            Value::Bool(true) => return json!({}),
            Value::Object(map) => map,
            other => return other.clone(),
        };

        // Inline a local reference; its siblings (description, …) are kept and win.
        if let Some(Value::String(reference)) = map.get("$ref") {
            let mut merged = Map::new();
            if self.stack.contains(reference) {
                self.warnings.push(SanitizeWarning::RecursiveRef(reference.clone()));
                merged.insert("type".into(), json!("object"));
            } else if let Some(target) = lookup(self.root, reference) {
                self.stack.push(reference.clone());
                if let Value::Object(resolved) = self.resolve(target, depth + 1) {
                    merged = resolved;
                }
                self.stack.pop();
            } else {
                self.warnings.push(SanitizeWarning::UnresolvedRef(reference.clone()));
            }
            for (key, value) in map {
                if key != "$ref" {
                    let child = self.resolve_child(key, value, depth);
                    merged.insert(key.clone(), child);
                }
            }
            return finish(merged);
        }

        let mut out = Map::new();
        for (key, value) in map {
            // Definitions are only reached through references; they are dropped from the output.
            if matches!(key.as_str(), "$defs" | "definitions") {
                continue;
            }
            let child = self.resolve_child(key, value, depth);
            out.insert(key.clone(), child);
        }
        finish(out)
    }

    fn resolve_child(&mut self, key: &str, value: &Value, depth: usize) -> Value {
        match key {
            "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => match value {
                Value::Object(children) => Value::Object(
                    children.iter().map(|(name, child)| (name.clone(), self.resolve(child, depth + 1))).collect(),
                ),
                other => other.clone(),
            },
            "items"
            | "additionalProperties"
            | "not"
            | "contains"
            | "propertyNames"
            | "if"
            | "then"
            | "else"
            | "unevaluatedProperties"
            | "unevaluatedItems"
            | "additionalItems" => match value {
                Value::Bool(_) if key != "items" => value.clone(),
                Value::Array(children) => Value::Array(children.iter().map(|c| self.resolve(c, depth + 1)).collect()),
                child => self.resolve(child, depth + 1),
            },
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => match value {
                Value::Array(children) => Value::Array(children.iter().map(|c| self.resolve(c, depth + 1)).collect()),
                other => other.clone(),
            },
            _ => value.clone(),
        }
    }
}

/// Unwraps single-variant combinators, turns `const` into `enum` and infers a missing type.
fn finish(mut map: Map<String, Value>) -> Value {
    for combinator in ["anyOf", "oneOf", "allOf"] {
        let single = matches!(map.get(combinator), Some(Value::Array(v)) if v.len() == 1);
        if single
            && let Some(Value::Array(mut variants)) = map.remove(combinator)
            && let Value::Object(inner) = variants.remove(0)
        {
            merge_into(&mut map, inner);
        }
    }
    if let Some(value) = map.remove("const") {
        map.entry("enum").or_insert_with(|| Value::Array(vec![value]));
    }
    if !map.contains_key("type")
        && !has_combinator(&map)
        && let Some(inferred) = infer_type(&map)
    {
        map.insert("type".into(), inferred);
    }
    Value::Object(map)
}

/// Merges `from` into `into`: `properties` and `required` are united, and for every other
/// keyword the value already in `into` wins.
pub(crate) fn merge_into(into: &mut Map<String, Value>, from: Map<String, Value>) {
    for (key, value) in from {
        match (key.as_str(), into.get_mut(&key), value) {
            ("properties", Some(Value::Object(existing)), Value::Object(extra)) => {
                for (name, prop) in extra {
                    existing.entry(name).or_insert(prop);
                }
            }
            ("required", Some(Value::Array(existing)), Value::Array(extra)) => {
                for name in extra {
                    if !existing.contains(&name) {
                        existing.push(name);
                    }
                }
            }
            (_, Some(_), _) => {}
            (_, None, value) => {
                into.insert(key, value);
            }
        }
    }
}

fn has_combinator(map: &Map<String, Value>) -> bool {
    ["anyOf", "oneOf", "allOf", "not"].iter().any(|k| map.contains_key(*k))
}

fn infer_type(map: &Map<String, Value>) -> Option<Value> {
    let has = |keys: &[&str]| keys.iter().any(|k| map.contains_key(*k));
    if has(&["properties", "required", "additionalProperties", "patternProperties", "minProperties", "maxProperties"]) {
        return Some(json!("object"));
    }
    if has(&["items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains"]) {
        return Some(json!("array"));
    }
    if has(&["minLength", "maxLength", "pattern", "format"]) {
        return Some(json!("string"));
    }
    if has(&["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"]) {
        return Some(json!("number"));
    }
    if let Some(Value::Array(values)) = map.get("enum") {
        let mut types: Vec<&str> = values.iter().map(json_type_name).collect();
        types.sort_unstable();
        types.dedup();
        return match types.as_slice() {
            [] => None,
            [single] => Some(json!(single)),
            many => Some(json!(many)),
        };
    }
    None
}

/// The JSON Schema type name of a value (`integer` for whole numbers).
pub(crate) fn json_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Follows a local JSON pointer reference (`#`, `#/$defs/X`, `#/properties/a/items`).
fn lookup<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(root);
    }
    root.pointer(pointer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn inlines_local_refs_and_keeps_sibling_descriptions() {
        let schema = json!({
            "type": "object",
            "properties": {"p": {"$ref": "#/$defs/Point", "description": "where"}},
            "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}}}}
        });
        let (out, warnings) = sanitize(schema);
        assert!(warnings.is_empty());
        assert_eq!(
            out,
            json!({"type": "object", "properties": {"p": {"type": "object", "properties": {"x": {"type": "number"}}, "description": "where"}}})
        );
    }

    #[test]
    fn cuts_reference_cycles_with_a_warning() {
        let schema = json!({
            "type": "object",
            "properties": {"node": {"$ref": "#/$defs/Node"}},
            "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}}
        });
        let (out, warnings) = sanitize(schema);
        assert_eq!(warnings, vec![SanitizeWarning::RecursiveRef("#/$defs/Node".into())]);
        assert_eq!(out["properties"]["node"]["properties"]["next"], json!({"type": "object"}));
    }

    #[test]
    fn self_reference_to_root_is_cut() {
        let (out, warnings) = sanitize(json!({"type": "object", "properties": {"again": {"$ref": "#"}}}));
        assert_eq!(warnings.len(), 1);
        assert_eq!(out["properties"]["again"]["properties"]["again"], json!({"type": "object"}));
    }

    #[test]
    fn unresolved_refs_are_reported() {
        let (out, warnings) = sanitize(json!({"properties": {"a": {"$ref": "https://example.com/s.json"}}}));
        assert_eq!(warnings, vec![SanitizeWarning::UnresolvedRef("https://example.com/s.json".into())]);
        assert_eq!(out, json!({"type": "object", "properties": {"a": {}}}));
    }

    #[test]
    fn unwraps_single_variants_and_converts_const() {
        let schema = json!({
            "properties": {
                "a": {"anyOf": [{"type": "string"}], "description": "d"},
                "b": {"oneOf": [{"const": 3}]},
                "c": {"allOf": [{"properties": {"z": {"type": "boolean"}}}]}
            }
        });
        let (out, _) = sanitize(schema);
        assert_eq!(
            out,
            json!({
                "type": "object",
                "properties": {
                    "a": {"type": "string", "description": "d"},
                    "b": {"enum": [3], "type": "integer"},
                    "c": {"properties": {"z": {"type": "boolean"}}, "type": "object"}
                }
            })
        );
    }

    #[test]
    fn infers_missing_types() {
        let (out, _) = sanitize(json!({"properties": {
            "s": {"maxLength": 3}, "n": {"minimum": 0}, "l": {"items": {"enum": ["a", "b"]}}, "m": {"enum": [1, "x"]}
        }}));
        assert_eq!(out["properties"]["s"]["type"], "string");
        assert_eq!(out["properties"]["n"]["type"], "number");
        assert_eq!(out["properties"]["l"]["type"], "array");
        assert_eq!(out["properties"]["l"]["items"]["type"], "string");
        assert_eq!(out["properties"]["m"]["type"], json!(["integer", "string"]));
    }

    #[test]
    fn references_that_multiply_are_cut_at_the_node_budget() {
        // Each definition names the next twice: 2^40 nodes if inlined in full.
        let mut defs = Map::new();
        for i in 0..40 {
            let next = json!({"$ref": format!("#/$defs/d{}", i + 1)});
            defs.insert(format!("d{i}"), json!({"type": "object", "properties": {"a": next, "b": next}}));
        }
        defs.insert("d40".into(), json!({"type": "string"}));
        let schema = json!({"type": "object", "properties": {"root": {"$ref": "#/$defs/d0"}}, "$defs": defs});
        let (out, warnings) = sanitize(schema);
        assert_eq!(warnings, vec![SanitizeWarning::TooLarge]);
        let text = out.to_string();
        assert!(text.len() < 2_000_000, "{} bytes", text.len());
        assert_eq!(out["properties"]["root"]["properties"]["a"]["type"], "object");
    }

    #[test]
    fn is_idempotent_and_survives_deep_nesting() {
        let mut deep = json!({"type": "string"});
        for _ in 0..500 {
            deep = json!({"type": "array", "items": deep});
        }
        let (once, _) = sanitize(deep);
        let (twice, _) = sanitize(once.clone());
        assert_eq!(once, twice);
    }
}

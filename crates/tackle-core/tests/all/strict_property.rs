//! Property test: whatever schema goes in, the `openai-strict` dialect's output obeys the
//! strict rules, optional properties come out nullable, and the transform is stable.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use tackle_core::schema::{accepts_null, sanitize, strict_schema, strict_violations};

fn leaf() -> impl Strategy<Value = Value> {
    let scalar = prop_oneof![
        Just("string"),
        Just("integer"),
        Just("number"),
        Just("boolean"),
        Just("null"),
        Just("object"),
        Just("array")
    ];
    prop_oneof![
        (scalar.clone(), any::<bool>(), any::<bool>()).prop_map(|(t, with_min, with_desc)| {
            let mut map = Map::new();
            map.insert("type".into(), json!(t));
            if with_min {
                map.insert("minimum".into(), json!(1));
                map.insert("maxLength".into(), json!(5));
                map.insert("pattern".into(), json!("^a"));
                map.insert("format".into(), json!("uri"));
                map.insert("default".into(), json!(3));
                map.insert("examples".into(), json!([1]));
            }
            if with_desc {
                map.insert("description".into(), json!("a field"));
            }
            Value::Object(map)
        }),
        (scalar.clone(), scalar).prop_map(|(a, b)| json!({"type": [a, b]})),
        Just(json!({})),
        Just(json!(true)),
        Just(json!({"const": "fixed"})),
        Just(json!({"enum": ["a", "b", 3]})),
        Just(json!({"$ref": "#/$defs/Shared"})),
        Just(json!({"$ref": "#/$defs/Loop"})),
        Just(json!({"not": {"type": "string"}})),
    ]
}

fn schema() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 48, 5, |inner| {
        prop_oneof![
            (
                proptest::collection::btree_map("[a-z]{1,6}", inner.clone(), 0..5),
                proptest::collection::vec(any::<bool>(), 5),
                prop_oneof![Just(None), Just(Some(json!(true))), Just(Some(json!({"type": "string"})))],
            )
                .prop_map(|(props, required_flags, additional)| {
                    let required: Vec<Value> =
                        props.keys().zip(&required_flags).filter(|(_, r)| **r).map(|(k, _)| json!(k)).collect();
                    let mut map = Map::new();
                    map.insert("type".into(), json!("object"));
                    map.insert("properties".into(), Value::Object(props.into_iter().collect()));
                    map.insert("required".into(), Value::Array(required));
                    if let Some(additional) = additional {
                        map.insert("additionalProperties".into(), additional);
                    }
                    Value::Object(map)
                }),
            inner.clone().prop_map(|items| json!({"type": "array", "items": items, "minItems": 1})),
            Just(json!({"type": "array"})),
            proptest::collection::vec(inner.clone(), 1..4).prop_map(|v| json!({"anyOf": v})),
            proptest::collection::vec(inner.clone(), 1..4).prop_map(|v| json!({"oneOf": v})),
            proptest::collection::vec(inner, 1..3).prop_map(|v| json!({"allOf": v})),
        ]
    })
}

fn root() -> impl Strategy<Value = Value> {
    (proptest::collection::btree_map("[a-z]{1,6}", schema(), 0..6), proptest::collection::vec(any::<bool>(), 6))
        .prop_map(|(props, flags)| {
            let required: Vec<Value> = props.keys().zip(&flags).filter(|(_, r)| **r).map(|(k, _)| json!(k)).collect();
            json!({
                "type": "object",
                "properties": props,
                "required": required,
                "$defs": {
                    "Shared": {"type": "object", "properties": {"x": {"type": "integer"}}},
                    "Loop": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Loop"}}}
                }
            })
        })
}

/// Walks original and converted object properties in parallel: a property that was optional
/// must accept null after the transform.
fn optional_ones_are_nullable(original: &Value, converted: &Value, at: &str) -> Result<(), String> {
    let (Some(orig_props), Some(conv_props)) =
        (original.get("properties").and_then(Value::as_object), converted.get("properties").and_then(Value::as_object))
    else {
        return Ok(());
    };
    let required: Vec<&str> = original
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for (name, orig) in orig_props {
        let Some(conv) = conv_props.get(name) else { return Err(format!("{at}.{name} disappeared")) };
        if !required.contains(&name.as_str()) && !accepts_null(conv) {
            return Err(format!("{at}.{name} was optional but is not nullable: {conv}"));
        }
        optional_ones_are_nullable(orig, conv, &format!("{at}.{name}"))?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn strict_output_obeys_the_strict_rules(input in root()) {
        let strict = strict_schema(&input);
        let problems = strict_violations(&strict.schema);
        prop_assert!(problems.is_empty(), "{problems:?}\ninput: {input}\noutput: {}", strict.schema);
        let (clean, _) = sanitize(input);
        prop_assert_eq!(optional_ones_are_nullable(&clean, &strict.schema, "$"), Ok(()));
        // Strict output is itself a fixed point of the transform.
        prop_assert_eq!(strict_schema(&strict.schema).schema, strict.schema);
    }

    #[test]
    fn sanitize_is_idempotent(input in root()) {
        let (once, _) = sanitize(input);
        let (twice, _) = sanitize(once.clone());
        prop_assert_eq!(once, twice);
    }
}

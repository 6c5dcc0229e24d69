//! Tool schemas in the dialect every MCP client accepts: an optional field is
//! left out, never `null`. schemars writes `Option<T>` as `"type": ["T", "null"]`
//! (or `anyOf: [T, {"type": "null"}]`), which clients that map tool schemas onto
//! a single-type dialect (Gemini's function declarations) reject. So the tools'
//! schemas drop the null alternative, and their results drop `null` fields.
//!
//! A field that can be left out must then not be `required` either: clients that
//! validate `structuredContent` against `outputSchema` (the official Python and
//! TypeScript SDKs) fail a call whose result lacks a required field. So a property
//! whose schema allowed `null` leaves its object's `required` list as its `null`
//! alternative goes.
//!
//! schemars also writes `"format": "uint64"` (and int32, double, ...) for
//! numbers: not JSON Schema formats, so validating clients (Ajv in the
//! TypeScript SDK) warn about each on every schema they compile. The range is
//! already in `minimum`/`maximum`; those formats go.
//!
//! Both walks use an explicit stack: a result holds what programs printed, and
//! no depth of it may grow the call stack.

use serde_json::{Map, Value};

/// Removes every `null` alternative from `schema`: `["T", "null"]` becomes `"T"`,
/// and `anyOf`/`oneOf` `[X, {"type": "null"}]` becomes `X` (its keywords merged
/// into the schema that held the union, which keeps its own description).
pub fn drop_null_unions(schema: &mut Map<String, Value>) {
    let mut stack: Vec<&mut Map<String, Value>> = vec![schema];
    while let Some(object) = stack.pop() {
        unrequire_nullable_properties(object);
        drop_numeric_format(object);
        drop_null_type(object);
        for key in ["anyOf", "oneOf"] {
            collapse_null_union(object, key);
        }
        for value in object.values_mut() {
            push_objects(value, &mut stack);
        }
    }
}

/// Formats schemars gives numbers that JSON Schema does not define.
const NUMERIC_FORMATS: [&str; 12] = [
    "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "float", "double",
];

fn drop_numeric_format(object: &mut Map<String, Value>) {
    if object
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|format| NUMERIC_FORMATS.contains(&format))
    {
        object.remove("format");
    }
}

/// Takes out of `required` every property whose schema allows `null` (checked
/// before its `null` alternative is dropped: parents are walked before children).
fn unrequire_nullable_properties(object: &mut Map<String, Value>) {
    let Some(Value::Object(properties)) = object.get("properties") else {
        return;
    };
    let nullable: Vec<String> = properties
        .iter()
        .filter(|(_, schema)| allows_null(schema))
        .map(|(name, _)| name.clone())
        .collect();
    if nullable.is_empty() {
        return;
    }
    let Some(Value::Array(required)) = object.get_mut("required") else {
        return;
    };
    required.retain(|name| !name.as_str().is_some_and(|name| nullable.iter().any(|n| n == name)));
    if required.is_empty() {
        object.remove("required");
    }
}

/// Whether a property's own schema (not what it refers to) admits `null`.
fn allows_null(schema: &Value) -> bool {
    if is_null_schema(schema) {
        return true;
    }
    if let Some(Value::Array(types)) = schema.get("type") {
        if types.iter().any(|t| t == "null") {
            return true;
        }
    }
    if let Some(Value::Array(values)) = schema.get("enum") {
        if values.iter().any(Value::is_null) {
            return true;
        }
    }
    ["anyOf", "oneOf"].iter().any(|key| match schema.get(*key) {
        Some(Value::Array(alternatives)) => alternatives.iter().any(is_null_schema),
        _ => false,
    })
}

/// The objects directly inside `value` (itself, or an array's elements).
fn push_objects<'a>(value: &'a mut Value, stack: &mut Vec<&'a mut Map<String, Value>>) {
    match value {
        Value::Object(object) => stack.push(object),
        Value::Array(items) => {
            for item in items {
                if let Value::Object(object) = item {
                    stack.push(object);
                }
            }
        }
        _ => {}
    }
}

/// `["T", "null"]` becomes `"T"`, and an optional enum (`Option<AgentState>`:
/// schemars lists `null` among its values) loses its `null` value.
fn drop_null_type(object: &mut Map<String, Value>) {
    if let Some(Value::Array(values)) = object.get_mut("enum") {
        values.retain(|value| !value.is_null());
    }
    let Some(Value::Array(types)) = object.get_mut("type") else {
        return;
    };
    types.retain(|t| t != "null");
    if types.len() == 1 {
        let only = types.remove(0);
        object.insert("type".into(), only);
    }
}

fn is_null_schema(value: &Value) -> bool {
    value.get("type").is_some_and(|t| t == "null")
}

fn collapse_null_union(object: &mut Map<String, Value>, key: &str) {
    let Some(Value::Array(alternatives)) = object.get_mut(key) else {
        return;
    };
    if !alternatives.iter().any(is_null_schema) {
        return;
    }
    alternatives.retain(|a| !is_null_schema(a));
    if alternatives.len() != 1 {
        return;
    }
    let Some(Value::Object(only)) = alternatives.pop() else {
        return;
    };
    object.remove(key);
    for (k, v) in only {
        object.entry(k).or_insert(v);
    }
}

/// Removes every object field whose value is `null`, at any depth.
pub fn drop_null_fields(value: &mut Value) {
    let mut stack: Vec<&mut Value> = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(object) => {
                object.retain(|_, v| !v.is_null());
                stack.extend(object.values_mut());
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            _ => {}
        }
    }
}

/// Whether `schema` still allows `null` anywhere (what [`drop_null_unions`] removes).
pub fn mentions_null(schema: &Value) -> bool {
    let mut stack = vec![schema];
    while let Some(value) = stack.pop() {
        match value {
            Value::String(s) if s == "null" => return true,
            Value::Object(object) => {
                let null_value = |values: &Vec<Value>| values.iter().any(Value::is_null);
                if object.get("enum").and_then(Value::as_array).is_some_and(null_value) {
                    return true;
                }
                stack.extend(object.values());
            }
            Value::Array(items) => stack.extend(items.iter()),
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cleaned(schema: Value) -> Value {
        let Value::Object(mut object) = schema else {
            panic!("an object")
        };
        drop_null_unions(&mut object);
        Value::Object(object)
    }

    #[test]
    fn nullable_types_become_optional_ones() {
        let schema = json!({
            "type": "object",
            "properties": {
                "cwd": {"type": ["string", "null"], "description": "where"},
                "env": {"anyOf": [{"$ref": "#/$defs/Env"}, {"type": "null"}], "description": "vars"},
                "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                "list": {"type": ["array", "null"], "items": {"type": ["integer", "null"]}},
                "agent": {"type": ["string", "null"], "enum": ["claude", "codex", null]}
            },
            "required": ["agent"],
            "$defs": {"Env": {"oneOf": [{"type": "object"}, {"type": "null"}]}}
        });
        let out = cleaned(schema);
        assert_eq!(
            out["properties"]["agent"],
            json!({"type": "string", "enum": ["claude", "codex"]})
        );
        assert_eq!(out.get("required"), None);
        assert_eq!(
            out["properties"]["cwd"],
            json!({"type": "string", "description": "where"})
        );
        assert_eq!(
            out["properties"]["env"],
            json!({"$ref": "#/$defs/Env", "description": "vars"})
        );
        assert_eq!(
            out["properties"]["either"],
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}]})
        );
        assert_eq!(out["properties"]["list"]["items"]["type"], "integer");
        assert_eq!(out["$defs"]["Env"], json!({"type": "object"}));
        assert!(!mentions_null(&out));
    }

    #[test]
    fn a_field_that_may_be_left_out_is_not_required() {
        let schema = json!({
            "type": "object",
            "properties": {
                "exit_code": {"type": ["integer", "null"], "format": "int32"},
                "signal": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "state": {"type": "string"},
                "inner": {
                    "type": "object",
                    "properties": {"only": {"type": ["string", "null"]}},
                    "required": ["only"]
                }
            },
            "required": ["exit_code", "signal", "state", "inner"]
        });
        let out = cleaned(schema);
        assert_eq!(out["required"], json!(["state", "inner"]));
        assert!(out["properties"]["inner"].get("required").is_none());
        assert_eq!(out["properties"]["exit_code"], json!({"type": "integer"}));
    }

    #[test]
    fn null_fields_go_at_any_depth() {
        let mut value = json!({"a": null, "b": [{"c": null, "d": 1}, null], "e": {"f": {"g": null}}});
        drop_null_fields(&mut value);
        assert_eq!(value, json!({"b": [{"d": 1}, null], "e": {"f": {}}}));
    }

    #[test]
    fn deep_values_do_not_grow_the_stack() {
        // Built by hand: json!'s interpolation serializes (recursively).
        let mut value = Value::Null;
        for _ in 0..100_000 {
            let mut object = Map::new();
            object.insert("x".into(), value);
            object.insert("y".into(), Value::Null);
            value = Value::Object(object);
        }
        drop_null_fields(&mut value);
        // Dropping the value itself is recursive in serde_json; take it apart here.
        let mut stack = vec![value];
        while let Some(v) = stack.pop() {
            if let Value::Object(o) = v {
                assert!(!o.contains_key("y"));
                stack.extend(o.into_iter().map(|(_, v)| v));
            }
        }
    }
}

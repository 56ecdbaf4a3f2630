//! Underlays in networkx's node-link JSON (`nx.node_link_data`, and the
//! topologies of the `topohub` package: Topology Zoo, SNDlib, CAIDA).
//!
//! ```json
//! {"directed": false, "multigraph": false, "graph": {"name": "abilene"},
//!  "nodes": [{"id": 0, "label": "New York", "lat": 40.71, "lon": -74.01}, ...],
//!  "links": [{"source": 0, "target": 1, "distance": 1146.2, "capacity": 1e10}, ...]}
//! ```
//!
//! * `nodes[]`: `id` (a number or a string) is required; the router's label
//!   is `label`, else `name`, else the id. Coordinates in degrees under one
//!   of the spellings `Latitude`/`Longitude`, `latitude`/`longitude`,
//!   `lat`/`lon`, or `pos: [longitude, latitude]` (topohub's convention; a
//!   note says it was read so). A node given as a bare id (`"nodes": [0, 1]`)
//!   has no attributes.
//! * `links[]` (newer networkx writes `edges`; both are read, not both at
//!   once): `source`, `target` name node ids; the length in km under
//!   `distance`, `length` or `dist`; `capacity` or `LinkSpeedRaw` in bit/s.
//! * Router ids: when every node id is an integer (or a string holding one)
//!   it is the router's id (`--center 3`); otherwise routers are numbered
//!   by their position in `nodes`.
//!
//! The document becomes the GML tree the GML reader builds from (keys kept
//! as spelled in the file), so every loading policy, check and report is the
//! GML one. Errors give `file:line:col` of the node or link object.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::gml::{GmlEntry, GmlValue, Pos};
use super::UnderlayError;

/// Keys of a node copied to the GML tree (the id and label are handled apart).
const NODE_KEYS: [&str; 6] = [
    "Latitude",
    "Longitude",
    "latitude",
    "longitude",
    "lat",
    "lon",
];

/// Keys of a link copied to the GML tree (the ends are handled apart).
const LINK_KEYS: [&str; 5] = ["distance", "length", "dist", "capacity", "LinkSpeedRaw"];

/// Whether `text` (after blanks) is a JSON object: the node-link format.
pub fn looks_like_json(text: &str) -> bool {
    text.trim_start_matches('\u{feff}')
        .trim_start()
        .starts_with('{')
}

/// Parses node-link JSON `text` into the top-level GML entries of the same
/// graph (`graph [ directed .. node [..] .. edge [..] .. ]`), plus notes on
/// what was read in a non-GML way (`pos` arrays). `file` names the source in
/// errors.
pub fn to_gml_entries(
    text: &str,
    file: &str,
) -> Result<(Vec<GmlEntry>, Vec<String>), UnderlayError> {
    let text = text.trim_start_matches('\u{feff}');
    let invalid = |pos: Pos, message: String| UnderlayError::Invalid {
        file: file.to_string(),
        pos,
        message,
    };
    let doc: Value = serde_json::from_str(text).map_err(|e| {
        invalid(
            Pos {
                line: e.line() as u32,
                col: e.column() as u32,
            },
            format!("invalid JSON: {e}"),
        )
    })?;
    let Value::Object(top) = doc else {
        return Err(invalid(
            Pos::START,
            "expected a node-link JSON object ({\"nodes\": [...], \"links\": [...]})".into(),
        ));
    };
    let nodes_key_pos = |key: &str| element_positions(text, key);
    let directed = match top.get("directed") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return Err(invalid(
                Pos::START,
                format!(
                    "expected true or false for `directed`, found {}",
                    kind(other)
                ),
            ))
        }
    };
    let nodes = match top.get("nodes") {
        Some(Value::Array(a)) => a.as_slice(),
        Some(other) => {
            return Err(invalid(
                Pos::START,
                format!("expected an array for `nodes`, found {}", kind(other)),
            ))
        }
        None => {
            return Err(invalid(
                Pos::START,
                "expected a `nodes` array (networkx node-link JSON), found none".into(),
            ))
        }
    };
    let links_key = match (top.get("links"), top.get("edges")) {
        (Some(_), Some(_)) => {
            return Err(invalid(
                Pos::START,
                "expected `links` or `edges`, found both".into(),
            ))
        }
        (Some(_), None) => "links",
        (None, Some(_)) => "edges",
        (None, None) => "links",
    };
    let links: &[Value] = match top.get(links_key) {
        None => &[],
        Some(Value::Array(a)) => a.as_slice(),
        Some(other) => {
            return Err(invalid(
                Pos::START,
                format!("expected an array for `{links_key}`, found {}", kind(other)),
            ))
        }
    };
    let node_pos = nodes_key_pos("nodes");
    let link_pos = nodes_key_pos(links_key);
    let at = |list: &[Pos], i: usize| list.get(i).copied().unwrap_or(Pos::START);

    // Node ids: the integer itself when every id is one, else the index.
    let keys: Vec<String> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let id = match n {
                Value::Object(o) => o.get("id"),
                other => Some(other),
            };
            id.and_then(key_text).ok_or_else(|| {
                invalid(
                    at(&node_pos, i),
                    format!("nodes[{i}]: expected an `id` (a number or a string)"),
                )
            })
        })
        .collect::<Result<_, _>>()?;
    let numeric: Option<Vec<i64>> = keys.iter().map(|k| k.trim().parse().ok()).collect();
    let ids: Vec<i64> = numeric.unwrap_or_else(|| (0..keys.len() as i64).collect());
    let mut by_key: HashMap<&str, i64> = HashMap::new();
    for (i, k) in keys.iter().enumerate() {
        if by_key.insert(k.as_str(), ids[i]).is_some() {
            return Err(invalid(
                at(&node_pos, i),
                format!("nodes[{i}]: expected unique node ids, found `{k}` again"),
            ));
        }
    }

    let mut notes = Vec::new();
    let mut from_pos = 0usize;
    let mut graph = vec![entry(
        "directed",
        GmlValue::Int(i64::from(directed)),
        Pos::START,
    )];
    for (i, n) in nodes.iter().enumerate() {
        let p = at(&node_pos, i);
        let mut attrs = vec![entry("id", GmlValue::Int(ids[i]), p)];
        let empty = Map::new();
        let o = n.as_object().unwrap_or(&empty);
        let label = ["label", "name"]
            .iter()
            .find_map(|k| o.get(*k).and_then(key_text))
            .unwrap_or_else(|| keys[i].clone());
        attrs.push(entry("label", GmlValue::Str(label), p));
        for key in NODE_KEYS {
            if let Some(v) = o.get(key) {
                attrs.push(entry(
                    key,
                    number(v, key, &format!("nodes[{i}]"), p, file)?,
                    p,
                ));
            }
        }
        if let Some(v) = o.get("pos") {
            let has_other = NODE_KEYS.iter().any(|k| o.contains_key(*k));
            let lon_lat = match v {
                Value::Array(a) if a.len() == 2 => a[0].as_f64().zip(a[1].as_f64()),
                _ => None,
            };
            match lon_lat {
                Some(_) if has_other => {
                    return Err(invalid(
                        p,
                        format!(
                            "nodes[{i}]: expected `pos` or latitude/longitude keys, found both"
                        ),
                    ))
                }
                Some((lon, lat))
                    if !(-90.0..=90.0).contains(&lat) || !(-180.0..=180.0).contains(&lon) =>
                {
                    return Err(invalid(
                        p,
                        format!(
                            "nodes[{i}]: expected `pos` as [longitude, latitude] in degrees, found \
                             {v}, outside [-180, 180] x [-90, 90] (a planar layout is not a \
                             position on Earth: remove `pos`, and give every link a length)"
                        ),
                    ))
                }
                Some((lon, lat)) => {
                    attrs.push(entry("Latitude", GmlValue::Real(lat), p));
                    attrs.push(entry("Longitude", GmlValue::Real(lon), p));
                    from_pos += 1;
                }
                None => {
                    return Err(invalid(
                        p,
                        format!(
                        "nodes[{i}]: expected `pos` as [longitude, latitude] in degrees, found {v}"
                    ),
                    ))
                }
            }
        }
        graph.push(entry("node", GmlValue::List(attrs), p));
    }
    if from_pos > 0 {
        notes.push(format!(
            "{from_pos} node position(s) read from `pos` as [longitude, latitude] (topohub's convention)"
        ));
    }
    for (i, l) in links.iter().enumerate() {
        let p = at(&link_pos, i);
        let what = format!("{links_key}[{i}]");
        let Value::Object(o) = l else {
            return Err(invalid(
                p,
                format!("{what}: expected an object {{\"source\": .., \"target\": ..}}"),
            ));
        };
        let mut attrs = Vec::new();
        for end in ["source", "target"] {
            let key = o.get(end).and_then(key_text).ok_or_else(|| {
                invalid(p, format!("{what}: expected a `{end}` naming a node id"))
            })?;
            let id = by_key.get(key.as_str()).ok_or_else(|| {
                invalid(
                    p,
                    format!("{what}: {end} `{key}` names no node (expected the id of a node)"),
                )
            })?;
            attrs.push(entry(end, GmlValue::Int(*id), p));
        }
        for key in LINK_KEYS {
            if let Some(v) = o.get(key) {
                attrs.push(entry(key, number(v, key, &what, p, file)?, p));
            }
        }
        graph.push(entry("edge", GmlValue::List(attrs), p));
    }
    Ok((
        vec![entry("graph", GmlValue::List(graph), Pos::START)],
        notes,
    ))
}

fn entry(key: &str, value: GmlValue, pos: Pos) -> GmlEntry {
    GmlEntry {
        key: key.to_string(),
        value,
        key_pos: pos,
        value_pos: pos,
    }
}

/// An id or label as text.
fn key_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A numeric attribute (numbers only; `null` and text are refused).
fn number(
    v: &Value,
    key: &str,
    what: &str,
    pos: Pos,
    file: &str,
) -> Result<GmlValue, UnderlayError> {
    match v {
        Value::Number(n) => match n.as_i64() {
            Some(i) => Ok(GmlValue::Int(i)),
            None => n
                .as_f64()
                .map(GmlValue::Real)
                .ok_or_else(|| UnderlayError::Invalid {
                    file: file.to_string(),
                    pos,
                    message: format!("{what}: expected a number for `{key}`, found {n}"),
                }),
        },
        other => Err(UnderlayError::Invalid {
            file: file.to_string(),
            pos,
            message: format!(
                "{what}: expected a number for `{key}`, found {}",
                kind(other)
            ),
        }),
    }
}

/// The positions (line, column of the first character) of the elements of
/// the array under the top-level key `key` of the JSON object `text` (valid
/// JSON: checked before). Strings are skipped with their escapes.
fn element_positions(text: &str, key: &str) -> Vec<Pos> {
    let mut out = Vec::new();
    let (mut line, mut col) = (1u32, 0u32);
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut string = String::new();
    let mut last_key_at_depth1: Option<String> = None;
    // Inside the wanted array: its depth, and whether an element may start.
    let mut target_depth: Option<usize> = None;
    let mut expect_element = false;
    for c in text.chars() {
        if c == '\n' {
            line += 1;
            col = 0;
        } else {
            col += 1;
        }
        if in_string {
            if escaped {
                escaped = false;
                string.push(c);
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
                if depth == 1 {
                    last_key_at_depth1 = Some(std::mem::take(&mut string));
                }
            } else {
                string.push(c);
            }
            continue;
        }
        if c.is_whitespace() {
            continue;
        }
        if expect_element && target_depth == Some(depth) && c != ']' {
            out.push(Pos { line, col });
            expect_element = false;
        }
        match c {
            '"' => {
                in_string = true;
                string.clear();
            }
            '{' | '[' => {
                depth += 1;
                if c == '[' && depth == 2 && last_key_at_depth1.as_deref() == Some(key) {
                    target_depth = Some(depth);
                    expect_element = true;
                }
            }
            '}' | ']' => {
                if target_depth == Some(depth) {
                    target_depth = None;
                    expect_element = false;
                }
                depth = depth.saturating_sub(1);
            }
            ',' if target_depth == Some(depth) => expect_element = true,
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_positions_point_at_each_object() {
        let text = "{\"graph\": {\"nodes\": [9]},\n \"nodes\": [\n  {\"id\": \"a]\"},\n  {\"id\": 2}\n ],\n \"links\": []}";
        assert_eq!(
            element_positions(text, "nodes"),
            vec![Pos { line: 3, col: 3 }, Pos { line: 4, col: 3 }]
        );
        assert!(element_positions(text, "links").is_empty());
    }
}

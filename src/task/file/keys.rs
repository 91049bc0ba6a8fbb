//! The keys of a task file that mean nothing to ufo-batch (each a warning): at the top,
//! and in each item of `actions` and `setup`. Found in one pass over the text that
//! checks every value as reading the file as a tree would (numbers in range, escapes,
//! nesting depth) without building it, or from the file already read as a tree when it
//! has problems.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::raw::{ACTION_KEYS, KNOWN_KEYS};

/// The keys that decide what a task is or how it is scored: one of them misspelt turns
/// a recorded plan into an LLM task, or drops its checks, so a near-miss of one (when
/// the file lacks the key itself) is a problem, not a warning.
pub(super) const SHAPE_KEYS: [&str; 7] = [
    "request",
    "task",
    "actions",
    "steps",
    "refined_steps",
    "instruction",
    "evaluate",
];

/// The lists whose items are actions.
const ACTION_LISTS: [&str; 2] = ["actions", "setup"];

/// Unknown keys, each once, in the order of the file.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct UnknownKeys {
    top: Vec<String>,
    /// Per list of [`ACTION_LISTS`]: the item's index and the key.
    items: [Vec<(usize, String)>; 2],
}

impl UnknownKeys {
    /// Those of a task file read as a tree.
    pub(super) fn of(object: &Map<String, Value>) -> Self {
        let mut keys = Self::default();
        for key in object.keys() {
            keys.top_key(key);
        }
        for (list, items) in ACTION_LISTS.iter().zip(&mut keys.items) {
            let Some(Value::Array(values)) = object.get(*list) else {
                continue;
            };
            for (i, value) in values.iter().enumerate() {
                for key in value.as_object().into_iter().flat_map(Map::keys) {
                    item_key(items, i, key);
                }
            }
        }
        keys
    }

    /// The top keys that are a near-miss of a [`SHAPE_KEYS`] key the file does not
    /// have (`present` says which it has), each with the key it likely meant.
    pub(super) fn misspelt_shape_keys(
        &self,
        present: impl Fn(&str) -> bool,
    ) -> Vec<(&str, &'static str)> {
        self.top
            .iter()
            .filter_map(|k| {
                let meant = crate::text::closest(k, KNOWN_KEYS.iter().copied())?;
                // Closer than a suggestion needs to be (`request_id` is not a typo).
                let typo = strsim::damerau_levenshtein(k, meant) <= 2;
                (typo && SHAPE_KEYS.contains(&meant) && !present(meant))
                    .then_some((k.as_str(), meant))
            })
            .collect()
    }

    /// Each as a warning: the top's, then each list's; `but` are top keys said as
    /// problems instead.
    pub(super) fn warnings<'a>(&'a self, but: &'a [&str]) -> impl Iterator<Item = String> + 'a {
        let top = self
            .top
            .iter()
            .filter(move |k| !but.contains(&k.as_str()))
            .map(|k| format!("unknown key `{k}` ignored{}", did_you_mean(k, KNOWN_KEYS)));
        let items = ACTION_LISTS
            .iter()
            .zip(&self.items)
            .flat_map(|(list, keys)| {
                keys.iter().map(move |(i, k)| {
                    format!(
                        "unknown key `{list}[{i}].{k}` ignored{}",
                        did_you_mean(k, ACTION_KEYS)
                    )
                })
            });
        top.chain(items)
    }

    fn top_key(&mut self, key: &str) {
        if !KNOWN_KEYS.contains(&key) && !self.top.iter().any(|k| k == key) {
            self.top.push(key.to_string());
        }
    }
}

fn item_key(keys: &mut Vec<(usize, String)>, item: usize, key: &str) {
    if !ACTION_KEYS.contains(&key) && !keys.iter().any(|(i, k)| *i == item && k == key) {
        keys.push((item, key.to_string()));
    }
}

impl<'de> Deserialize<'de> for UnknownKeys {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(TopKeys)
    }
}

/// The top object: keys kept, values skipped but the action lists'.
struct TopKeys;

impl<'de> Visitor<'de> for TopKeys {
    type Value = UnknownKeys;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<UnknownKeys, A::Error> {
        let mut keys = UnknownKeys::default();
        while let Some(key) = map.next_key::<String>()? {
            match ACTION_LISTS.iter().position(|list| *list == key) {
                Some(list) => {
                    // A list of actions, or null (anything else is not a task file's).
                    let items = map.next_value::<Option<Vec<ActionKeys>>>()?;
                    keys.items[list].clear();
                    for (i, item) in items.into_iter().flatten().enumerate() {
                        for key in &item.0 {
                            item_key(&mut keys.items[list], i, key);
                        }
                    }
                }
                None => {
                    keys.top_key(&key);
                    map.next_value::<Checked>()?;
                }
            }
        }
        Ok(keys)
    }
}

/// Any JSON value, gone through whole and checked as a tree of it would be (a number
/// out of range, a lone surrogate escape or nesting too deep is an error), but not kept.
struct Checked;

impl<'de> Deserialize<'de> for Checked {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(CheckedVisitor)
    }
}

struct CheckedVisitor;

impl<'de> Visitor<'de> for CheckedVisitor {
    type Value = Checked;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_str<E>(self, _: &str) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_unit<E>(self) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Checked, A::Error> {
        while seq.next_element::<Checked>()?.is_some() {}
        Ok(Checked)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Checked, A::Error> {
        while map.next_entry::<Checked, Checked>()?.is_some() {}
        Ok(Checked)
    }
}

/// An action's keys.
struct ActionKeys(Vec<String>);

impl<'de> Deserialize<'de> for ActionKeys {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ActionKeysVisitor)
    }
}

struct ActionKeysVisitor;

impl<'de> Visitor<'de> for ActionKeysVisitor {
    type Value = ActionKeys;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an action")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ActionKeys, A::Error> {
        let mut keys = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            map.next_value::<Checked>()?;
            keys.push(key);
        }
        Ok(ActionKeys(keys))
    }
}

/// ` (did you mean `KEY`?)` when `key` looks like a misspelt one of `known`.
fn did_you_mean(key: &str, known: &[&str]) -> String {
    crate::text::closest(key, known.iter().copied())
        .map(|k| format!(" (did you mean `{k}`?)"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_pass_finds_the_keys_the_tree_does() {
        let text = r#"{"request": "r", "extra": [1, {"a": 2}], "actions": [
            {"action": "x", "parameters": {"deep": {"odd": 1}}, "why": 1, "why": 2},
            {"action": "y", "note": "n"}], "setup": [{"zzz": null}], "Extra": 1,
            "extra": 3, "\u0065xtra2": true}"#;
        let tree: Value = serde_json::from_str(text).unwrap();
        let scanned: UnknownKeys = serde_json::from_str(text).unwrap();
        assert_eq!(scanned, UnknownKeys::of(tree.as_object().unwrap()));
        assert_eq!(
            scanned.warnings(&[]).collect::<Vec<_>>(),
            [
                "unknown key `extra` ignored",
                "unknown key `Extra` ignored",
                "unknown key `extra2` ignored",
                "unknown key `actions[0].why` ignored",
                "unknown key `actions[1].note` ignored",
                "unknown key `setup[0].zzz` ignored",
            ]
        );
    }

    /// What a tree refuses, the pass refuses, wherever it is: a number out of range, a
    /// lone surrogate, nesting deeper than the parser allows.
    #[test]
    fn the_pass_refuses_every_value_a_tree_refuses() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        for value in ["1e999", r#""\ud800""#, deep.as_str()] {
            for text in [
                format!(r#"{{"request": "r", "note": {value}}}"#),
                format!(r#"{{"actions": [{{"action": "x", "n": {value}}}]}}"#),
                format!(r#"{{"actions": [{{"action": "x", "parameters": {{"n": {value}}}}}]}}"#),
            ] {
                assert!(serde_json::from_str::<Value>(&text).is_err(), "{text}");
                assert!(
                    serde_json::from_str::<UnknownKeys>(&text).is_err(),
                    "{text}"
                );
            }
        }
    }

    #[test]
    fn a_list_that_is_null_has_no_keys() {
        let scanned: UnknownKeys = serde_json::from_str(r#"{"actions": null}"#).unwrap();
        assert_eq!(scanned, UnknownKeys::default());
    }
}

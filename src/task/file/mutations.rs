//! A property over task-file bytes: whatever a file holds, reading it gives a task or a
//! list of problems, never a panic. Inputs are the sample plans and UFO's shapes,
//! mutated the ways real files go wrong (bytes flipped, cut short, values swapped for
//! extreme numbers, wrong types, deep nesting, odd text). A fixed seed keeps CI
//! repeatable; `UFO_BATCH_MUTATIONS=N` and `UFO_BATCH_SEED=S` run more, or others.

use std::path::Path;

use super::parse_task;
use crate::executor::shell_tools;
use crate::task::TaskId;

/// Values that break naive code: extreme numbers, wrong types, odd text.
const HOSTILE: &[&str] = &[
    "1e308",
    "-1e308",
    "18446744073709551615",
    "-9223372036854775809",
    "0",
    "-0.0",
    "1e-320",
    "null",
    "true",
    "[]",
    "{}",
    "\"\"",
    "\"../../etc/passwd\"",
    "\"/abs\"",
    "\"a\\u0000b\"",
    "\"\\ud800\"",
    "\"\u{202e}evil\"",
    "\"summary.json\"",
    "\"x/workspace/y\"",
    "[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]",
    "{\"action\": \"execute_command\", \"parameters\": {\"command\": 1}}",
    "\"(((((((((((((((((((((a*)*)*)*)*)*)*)*)*)*)*)*)*)*)*)*)*)*)*)*)*)\"",
];

/// The seeds: every sample plan plus one file of each shape.
fn seeds() -> Vec<String> {
    let mut seeds = vec![
        r#"{"task": "t", "object": "a.docx", "close": "True", "steps": ["one", "two"]}"#.to_string(),
        r#"{"request": "r", "timeout": "90s", "max_steps": 3, "tags": ["a"], "files": {"a/b.txt": "x"}, "setup": [{"action": "write_file", "parameters": {"path": "p", "content": "c"}}], "evaluate": [{"type": "file_contains", "path": "p", "pattern": "c+"}, {"type": "command", "run": "true", "exit_code": 0, "stdout": "."}]}"#.to_string(),
        r#"{"app": "word", "unique_id": "1", "task": "t", "refined_steps": ["a"]}"#.to_string(),
    ];
    let plans = Path::new(env!("CARGO_MANIFEST_DIR")).join("plans");
    for entry in walkdir::WalkDir::new(plans)
        .sort_by_file_name()
        .into_iter()
        .flatten()
    {
        if entry.path().extension().is_some_and(|x| x == "json") {
            seeds.push(std::fs::read_to_string(entry.path()).unwrap());
        }
    }
    seeds
}

/// One mutation of `text`.
fn mutate(rng: &mut fastrand::Rng, text: &str) -> String {
    let bytes = text.as_bytes();
    let at = rng.usize(..=bytes.len());
    match rng.u8(..8) {
        // Cut short.
        0 => String::from_utf8_lossy(&bytes[..at]).into_owned(),
        // A byte flipped.
        1 if !bytes.is_empty() => {
            let mut b = bytes.to_vec();
            let i = rng.usize(..b.len());
            b[i] ^= 1 << rng.u8(..8);
            String::from_utf8_lossy(&b).into_owned()
        }
        // A value replaced by a hostile one.
        2..=4 => {
            let values: Vec<usize> = text.match_indices(": ").map(|(i, _)| i + 2).collect();
            let Some(&start) = values.get(rng.usize(..values.len().max(1))) else {
                return text.to_string();
            };
            let end = text[start..]
                .find([',', '}', ']'])
                .map_or(text.len(), |e| start + e);
            format!(
                "{}{}{}",
                &text[..start],
                HOSTILE[rng.usize(..HOSTILE.len())],
                &text[end..]
            )
        }
        // A hostile token inserted anywhere (on a character boundary).
        5 => {
            let at = (0..=at)
                .rev()
                .find(|i| text.is_char_boundary(*i))
                .unwrap_or(0);
            format!(
                "{}{}{}",
                &text[..at],
                HOSTILE[rng.usize(..HOSTILE.len())],
                &text[at..]
            )
        }
        // A key swapped for another known key.
        6 => {
            let keys = [
                "\"id\"",
                "\"task\"",
                "\"request\"",
                "\"actions\"",
                "\"steps\"",
                "\"timeout\"",
                "\"evaluate\"",
                "\"files\"",
                "\"setup\"",
                "\"max_steps\"",
                "\"close\"",
                "\"object\"",
            ];
            let from = keys[rng.usize(..keys.len())];
            let to = keys[rng.usize(..keys.len())];
            text.replacen(from, to, 1)
        }
        // Deep nesting around the whole file.
        _ => format!(
            "{}{}{}",
            "[".repeat(rng.usize(1..200)),
            text,
            "]".repeat(rng.usize(1..200))
        ),
    }
}

#[test]
fn no_task_file_makes_reading_panic() {
    let runs: usize = std::env::var("UFO_BATCH_MUTATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4000);
    let seed: u64 = std::env::var("UFO_BATCH_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed);
    let mut rng = fastrand::Rng::with_seed(seed);
    let seeds = seeds();
    let tools = shell_tools();
    let file = Path::new("mutated.json");
    for i in 0..runs {
        let mut text = seeds[rng.usize(..seeds.len())].clone();
        for _ in 0..rng.usize(1..4) {
            text = mutate(&mut rng, &text);
        }
        let read = std::panic::catch_unwind(|| {
            let outcome = parse_task(file, &text, TaskId::parse("t"), tools);
            if let Err(problems) = &outcome.result {
                assert!(!problems.is_empty(), "a bad file must say what is wrong");
                for p in problems {
                    let _ = p.to_string();
                }
            }
        });
        assert!(
            read.is_ok(),
            "mutation {i} (seed {seed}) panicked on:\n{text}"
        );
    }
}

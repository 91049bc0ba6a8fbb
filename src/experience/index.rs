//! Finding the records most like a request: Okapi BM25 over each record's `request`
//! (what UFO's retriever embeds, `create_or_update_vector_db`), with the `bm25` crate's
//! tokenizer (English stemming and stop words). No network and no model: UFO's FAISS
//! index of Hugging Face embeddings is replaced by a lexical ranking, built when the run
//! starts and grown as the run saves records.
//!
//! UFO's AppAgent keeps only records whose `app_list` names its app
//! (`rag_experience_retrieve`); here every name is compared by the app it means
//! (`WINWORD.EXE`, `word` and `writer` are one app), and a shell task's records say
//! `shell`.

use std::sync::Arc;

use bm25::{Embedder, EmbedderBuilder, Language, Scorer};

use super::record::ExperienceRecord;
use crate::desktop::app::Known;

/// The app name a shell task's records carry.
pub(crate) const SHELL_APP: &str = "shell";

/// Average request length (in tokens after stop words) assumed before any record is
/// known.
const DEFAULT_AVGDL: f32 = 10.0;

/// The app a name means, as records are compared: a known desktop app by its kind
/// (`word`, `excel`, `powerpoint`, `notepad`), anything else by its name in lower case.
pub(crate) fn app_key(name: &str) -> String {
    match Known::from_name(name) {
        Some(known) => known_key(known).to_string(),
        None => name.trim().to_lowercase(),
    }
}

/// The name a known desktop app goes by in records.
pub(crate) fn known_key(known: Known) -> &'static str {
    match known {
        Known::Word => "word",
        Known::Excel => "excel",
        Known::PowerPoint => "powerpoint",
        Known::Notepad => "notepad",
    }
}

/// One record in the index.
pub(crate) struct Entry {
    /// Its key in its file (`example12`), or a demonstration's plan file.
    pub(crate) key: String,
    /// The record.
    pub(crate) record: Arc<ExperienceRecord>,
    /// Its apps, as [`app_key`] names them.
    apps: Vec<String>,
}

/// A record found, with its BM25 score.
pub(crate) struct Found<'a> {
    pub(crate) entry: &'a Entry,
    pub(crate) score: f32,
    /// Its place in the library.
    index: usize,
}

/// Records, searchable by request.
pub(crate) struct Library {
    entries: Vec<Entry>,
    embedder: Embedder,
    scorer: Scorer<usize>,
}

impl Library {
    /// A library of `records` (key and record), its document length fit to them.
    pub(crate) fn new(records: Vec<(String, ExperienceRecord)>) -> Self {
        let embedder = if records.is_empty() {
            EmbedderBuilder::with_avgdl(DEFAULT_AVGDL)
                .language_mode(Language::English)
                .build()
        } else {
            let corpus: Vec<&str> = records.iter().map(|(_, r)| r.request.as_str()).collect();
            EmbedderBuilder::with_fit_to_corpus(Language::English, &corpus).build()
        };
        let mut library = Self {
            entries: Vec::with_capacity(records.len()),
            embedder,
            scorer: Scorer::new(),
        };
        for (key, record) in records {
            library.add(key, record);
        }
        library
    }

    /// Adds a record (one this run saved).
    pub(crate) fn add(&mut self, key: String, record: ExperienceRecord) {
        let id = self.entries.len();
        self.scorer
            .upsert(&id, self.embedder.embed(&record.request));
        self.entries.push(Entry {
            key,
            apps: record.app_list.iter().map(|a| app_key(a)).collect(),
            record: Arc::new(record),
        });
    }

    /// The `top_k` records most like `query` (best first, only those sharing a word
    /// with it) that `keep` accepts, done in `app` (any app when `None`). `keep` sees
    /// the candidates best first.
    pub(crate) fn search(
        &self,
        query: &str,
        app: Option<&str>,
        top_k: usize,
        keep: impl Fn(&ExperienceRecord) -> bool,
    ) -> Vec<Found<'_>> {
        let app = app.map(app_key);
        let query = self.embedder.embed(query);
        let mut found: Vec<Found<'_>> = self
            .scorer
            .matches(&query)
            .into_iter()
            .filter_map(|m| {
                let entry = &self.entries[m.id];
                let in_app = app.as_ref().is_none_or(|a| entry.apps.contains(a));
                in_app.then_some(Found {
                    entry,
                    score: m.score,
                    index: m.id,
                })
            })
            .collect();
        // Equal scores in the order the records were added, whatever the hash map's.
        found.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| a.index.cmp(&b.index))
        });
        found
            .into_iter()
            .filter(|f| keep(&f.entry.record))
            .take(top_k)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(request: &str, app: &str) -> (String, ExperienceRecord) {
        let r = ExperienceRecord {
            example: Default::default(),
            tips: String::new(),
            request: request.into(),
            subtask: request.into(),
            app_list: vec![app.into()],
            origin: None,
            verdict: None,
        };
        (format!("k-{request}"), r)
    }

    #[test]
    fn ranks_by_shared_words_and_filters_by_app() {
        let library = Library::new(vec![
            record("Sum the amount column of sales.csv", SHELL_APP),
            record("Count the error lines in the server log", SHELL_APP),
            record("Make the title of the report bold", "WINWORD.EXE"),
        ]);
        let found = library.search(
            "add up the amount column in a csv",
            Some("shell"),
            5,
            |_| true,
        );
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].entry.key, "k-Sum the amount column of sales.csv");
        let word = library.search("bold title", Some("writer"), 5, |_| true);
        assert_eq!(word.len(), 1);
        assert!(
            library
                .search("bold title", Some("excel"), 5, |_| true)
                .is_empty()
        );
        assert!(
            library
                .search("bold title", Some("shell"), 5, |_| false)
                .is_empty()
        );
    }
}

//! Integration tests: the `ufo-batch` binary run on temporary folders, its exit code,
//! its output and the files it writes.

mod helpers;
mod mock_llm;

mod concurrency;
mod llm;
mod llm_faults;
mod outcomes;
mod resume;
mod samples;
mod shapes;
mod timeouts;

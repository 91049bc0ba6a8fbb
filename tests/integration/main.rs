//! Integration tests: the `ufo-batch` binary run on temporary folders, its exit code,
//! its output and the files it writes. They drive Unix processes, signals and `/proc`:
//! on other systems there are none.
#![cfg(unix)]

mod cdp;
mod helpers;
mod mock_llm;

mod blame;
mod cancel;
mod concurrency;
mod containment;
mod crash;
mod desktop;
mod desktop_agents;
mod devices;
mod documents;
mod experience;
mod first_hour;
mod harbor;
mod hostile_input;
mod llm;
mod llm_faults;
mod mcp;
mod office_api;
mod operator;
mod osworld;
mod outcomes;
mod priorities;
mod rate_limits;
mod report_page;
mod reports;
mod resume;
mod retries;
mod samples;
mod sandbox;
mod shapes;
mod shards;
mod statistics;
mod tampered_rundirs;
mod task_rights;
mod timeouts;
mod trust;
mod try_llm;
mod ufo_real;
mod ufo_trajectory;

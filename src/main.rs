//! The `ufo-batch` binary: parse the command line, run it, print an error once, exit
//! with the code the run earned. (A closed standard error loses the message, not the
//! exit code.)

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use tracing_subscriber::EnvFilter;

fn main() -> ExitCode {
    let cli = match ufo_batch::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            if e.use_stderr()
                && let Some(note) = ufo_batch::cli::Cli::env_note(&e.to_string())
            {
                let _ = writeln!(std::io::stderr(), "{note}");
            }
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env()
                // The MCP client logs each broken connection as an error; the runner
                // says what it meant (a failed call, a server that cannot be reached).
                .unwrap_or_else(|_| EnvFilter::new("warn,rmcp=off")),
        )
        .with_writer(ufo_batch::ScrubbedStderr::default)
        .init();
    match ufo_batch::execute(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            let text = e.render();
            let _ = writeln!(std::io::stderr(), "{text}");
            if let Some(note) = ufo_batch::cli::Cli::env_note(&text) {
                let _ = writeln!(std::io::stderr(), "{note}");
            }
            ExitCode::from(e.exit_code())
        }
    }
}

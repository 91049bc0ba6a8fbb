//! The `ufo-batch` binary: parse the command line, run it, print an error once, exit
//! with the code the run earned.

use std::process::ExitCode;

use clap::Parser;
use tracing_subscriber::EnvFilter;

fn main() -> ExitCode {
    let cli = ufo_batch::cli::Cli::parse();
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
            eprintln!("{}", e.render());
            ExitCode::from(e.exit_code())
        }
    }
}

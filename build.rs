//! Build script.
//!
//! - The release binaries keep their line tables (backtraces with file and line) but carry
//!   them compressed (zlib; the standard library's backtrace reader decompresses zlib, not
//!   zstd), which takes the binary from about 150 MB to about 60.
//! - The test stacks to skip: each stack named in `UFO_BATCH_SKIP_TESTS` (a comma list, or
//!   `all`) becomes the cfg `skip_<stack>`, under which the tests that need that stack are
//!   marked ignored (`#[cfg_attr(skip_desktop, ignore = "...")]`): the harness counts them
//!   as ignored, never as passed. The list is also given to the tests as
//!   `UFO_BATCH_SKIPPED_STACKS`, so that a test that needs a skipped stack but lacks the
//!   mark fails saying so (tests/integration/helpers.rs, `require_stack`).

/// Every stack a test can need (scripts/setup-tests.sh installs them).
const STACKS: [&str; 11] = [
    "desktop", "osworld", "browser", "mcp", "ufo", "stats", "harbor", "operator", "bwrap",
    "script", "shm",
];

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=UFO_BATCH_SKIP_TESTS");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    if linux {
        println!("cargo::rustc-link-arg-bins=-Wl,--compress-debug-sections=zlib");
    }
    let asked = std::env::var("UFO_BATCH_SKIP_TESTS").unwrap_or_default();
    let asked: Vec<&str> = asked.split(',').map(str::trim).collect();
    let mut skipped = Vec::new();
    for stack in STACKS {
        println!("cargo::rustc-check-cfg=cfg(skip_{stack})");
        if asked.iter().any(|a| *a == stack || *a == "all") {
            println!("cargo::rustc-cfg=skip_{stack}");
            skipped.push(stack);
        }
    }
    println!(
        "cargo::rustc-env=UFO_BATCH_SKIPPED_STACKS={}",
        skipped.join(",")
    );
}

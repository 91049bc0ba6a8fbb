//! Build script: the release binaries keep their line tables (backtraces with file and
//! line) but carry them compressed (zlib; the standard library's backtrace reader
//! decompresses zlib, not zstd), which takes the binary from about 150 MB to about 60.

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    if linux {
        println!("cargo::rustc-link-arg-bins=-Wl,--compress-debug-sections=zlib");
    }
}

//! `ufo-batch-jail`: one task's jail, made with its control socket as standard input and
//! the folders the task may write as `--rw DIR`: by the runner's jail factory (`zygote`,
//! the binary started once with `--zygote`, which forks one per task), or by starting the
//! binary itself. It then:
//!
//! 1. reads its arguments (`options`), enters new user, mount, IPC and PID namespaces
//!    (the network stays shared: tasks may need it) and forks the task's init, PID 1 of
//!    the new PID namespace (`setup`);
//! 2. makes the whole file system read-only but for the `--rw` folders, gives the task a
//!    `/proc` of its own (only its processes, never the runner's) and a `/dev` with only
//!    the harmless devices (`view`);
//! 3. drops every capability, forbids new privileges, and confines itself with Landlock
//!    (writes only in the `--rw` folders; no signals or abstract sockets out of the jail)
//!    and seccomp (no Unix sockets to connect to anything on the machine) (`harden`);
//! 4. starts each command the runner asks for in its own process group (`command`) and
//!    says when it ends (`serve`), on its control socket (`control`).
//!
//! Whatever fails is said to the runner in words (`error`), whose side says whose
//! failure it is.
//!
//! Everything dies with the jail: when the runner ends it, closes the socket or is killed,
//! the init kills every process of its namespace, `setsid` children included, and exits.

#[cfg(target_os = "linux")]
#[path = "../../jail/protocol.rs"]
mod protocol;

#[cfg(target_os = "linux")]
#[path = "../../executor/sandbox/bpf.rs"]
mod bpf;
#[cfg(target_os = "linux")]
#[path = "../../caps.rs"]
#[allow(dead_code)] // the init only drops them all; the runner reads them too
mod caps;
#[cfg(target_os = "linux")]
mod children;
#[cfg(target_os = "linux")]
mod command;
#[cfg(target_os = "linux")]
mod control;
#[cfg(target_os = "linux")]
mod error;
#[cfg(target_os = "linux")]
mod harden;
#[cfg(target_os = "linux")]
mod options;
#[cfg(target_os = "linux")]
mod serve;
#[cfg(target_os = "linux")]
mod setup;
#[cfg(target_os = "linux")]
mod view;
#[cfg(target_os = "linux")]
mod zygote;

#[cfg(target_os = "linux")]
fn main() -> std::process::ExitCode {
    // Not `args()`, which panics on an argument that is not UTF-8: refused in words.
    let args: Vec<String> = match std::env::args_os()
        .skip(1)
        .map(std::ffi::OsString::into_string)
        .collect()
    {
        Ok(args) => args,
        Err(bad) => {
            eprintln!(
                "ufo-batch-jail: an argument is not UTF-8: {}",
                bad.to_string_lossy()
            );
            return std::process::ExitCode::from(2);
        }
    };
    if args.first().map(String::as_str) == Some("--zygote") {
        zygote::main()
    } else {
        setup::main(args)
    }
}

#[cfg(not(target_os = "linux"))]
fn main() -> std::process::ExitCode {
    eprintln!("ufo-batch-jail: task jails exist only on Linux");
    std::process::ExitCode::from(2)
}

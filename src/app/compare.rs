//! `ufo-batch compare RUN_A RUN_B`: the comparison as markdown or JSON, on stdout and
//! optionally in a file, and as a page with `--html`; exit 1 as `--fail-on` says (by
//! default when a task regressed), or when B lacks tasks of A (unless `--allow-missing`).

use std::path::{Component, Path, PathBuf};

use super::stdout::{Form, print};
use crate::cli::CompareArgs;
use crate::error::Error;
use crate::finished::compare as compare_runs;
use crate::render::{compare_html, compare_md};
use crate::rundir::{FileError, write_atomic};

/// Compares; 1 when the comparison fails under `--fail-on`.
pub(super) fn compare(args: &CompareArgs) -> Result<u8, Error> {
    for path in [&args.out, &args.html].into_iter().flatten() {
        only_a_regular_file(path)?;
    }
    let mut c = compare_runs(&args.a, &args.b, args.alpha)?;
    c.allow_missing = args.allow_missing;
    let text = if args.json {
        serde_json::to_string_pretty(&c).map_err(|e| Error::internal(e.to_string()))? + "\n"
    } else {
        compare_md(&c)
    };
    if let Some(out) = &args.out {
        write_atomic(out, text.as_bytes()).map_err(|e| FileError::write(out, e))?;
    }
    if let Some(page) = &args.html {
        c.pictures.series = crate::finished::series(&args.b);
        let b = page
            .parent()
            .and_then(|dir| relative(dir, &args.b))
            .map(|p| url_path(&p));
        let html = compare_html(&c, b.as_deref()).map_err(|e| Error::internal(e.to_string()))?;
        write_atomic(page, html.as_bytes()).map_err(|e| FileError::write(page, e))?;
    }
    // Printed last: the files are written even when the reader of stdout went away.
    let form = if args.json { Form::Json } else { Form::Text };
    print(&text, form)?;
    Ok(u8::from(c.fails(args.fail_on)))
}

/// Refuses an output path where something other than a regular file is: it would be
/// replaced (a device node, a FIFO, a link to anything), not written to.
fn only_a_regular_file(path: &Path) -> Result<(), Error> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if !meta.is_file() => Err(FileError::write(
            path,
            std::io::Error::other(
                "it is not a regular file (a link, a device, a FIFO or a folder), and compare replaces only a regular file",
            ),
        )
        .into()),
        _ => Ok(()),
    }
}

/// A relative path as a URL path: each segment percent-encoded, joined with `/`.
fn url_path(path: &Path) -> String {
    let segments: Vec<String> = path
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    crate::render::url_path(&segments.join("/"))
}

/// The path from the folder `from` to `to`, both resolved (none when either cannot be).
fn relative(from: &Path, to: &Path) -> Option<PathBuf> {
    let from = if from.as_os_str().is_empty() {
        Path::new(".")
    } else {
        from
    };
    let from = from.canonicalize().ok()?;
    let to = to.canonicalize().ok()?;
    let a: Vec<Component> = from.components().collect();
    let b: Vec<Component> = to.components().collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut path: PathBuf = std::iter::repeat_n(Component::ParentDir, a.len() - common).collect();
    path.extend(&b[common..]);
    Some(if path.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        path
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_between_folders() {
        let root = tempfile::tempdir().unwrap();
        let (a, b) = (root.path().join("x/y"), root.path().join("z"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        assert_eq!(relative(&a, &b), Some(PathBuf::from("../../z")));
        assert_eq!(relative(&b, &b), Some(PathBuf::from(".")));
        assert_eq!(relative(&a, &root.path().join("gone")), None);
        assert_eq!(
            url_path(Path::new("../runs/my run#2/b")),
            "../runs/my%20run%232/b"
        );
    }
}

use std::os::unix::fs::symlink;
use std::path::PathBuf;

use super::*;

struct Setup {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    outside: PathBuf,
}

/// A workspace beside a host file outside it.
fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let outside = dir.path().join("host.txt");
    std::fs::write(&outside, "host").unwrap();
    Setup {
        _dir: dir,
        ws,
        outside,
    }
}

fn rel(text: &str) -> RelPath {
    RelPath::parse(text, true).unwrap()
}

#[test]
fn files_are_written_read_and_appended_beneath_the_root() {
    let s = setup();
    let c = Confined::open(&s.ws).unwrap();
    c.write(&rel("a/b/c.txt"), b"first", false).unwrap();
    c.write(&rel("a/b/c.txt"), b"second", false).unwrap();
    c.write(&rel("a/b/c.txt"), b"+", true).unwrap();
    let read = c.read(&rel("a/b/c.txt"), 4, None).unwrap();
    assert_eq!((read.bytes.as_slice(), read.size), (&b"seco"[..], 7));
    assert_eq!(c.kind(&rel("a/b")).unwrap(), Some(Kind::Dir));
    assert_eq!(c.kind(&rel("a/nope")).unwrap(), None);
    assert_eq!(c.kind(&rel("nope/deeper")).unwrap(), None);
    assert!(matches!(
        c.read(&rel("nope.txt"), 10, None),
        Err(FileAccessError::NotFound)
    ));
}

/// A link where the file is, dangling or not, and a link on the way: neither read nor
/// written through, and the host file stays as it was.
#[test]
fn links_are_never_followed() {
    let s = setup();
    symlink(&s.outside, s.ws.join("to-host")).unwrap();
    symlink(
        s.outside.with_file_name("new-on-host.txt"),
        s.ws.join("dangling"),
    )
    .unwrap();
    symlink(s.outside.parent().unwrap(), s.ws.join("up")).unwrap();
    std::fs::write(s.ws.join("inside.txt"), "in").unwrap();
    symlink("inside.txt", s.ws.join("to-inside")).unwrap();
    let c = Confined::open(&s.ws).unwrap();
    for path in [
        "to-host",
        "dangling",
        "up/host.txt",
        "up/new.txt",
        "to-inside",
    ] {
        let e = c.write(&rel(path), b"x", false).unwrap_err();
        assert!(matches!(e, FileAccessError::Link), "{path}: {e}");
        let e = c.write(&rel(path), b"x", true).unwrap_err();
        assert!(matches!(e, FileAccessError::Link), "{path}: {e}");
        if path != "dangling" && path != "up/new.txt" {
            let e = c.read(&rel(path), 10, None).unwrap_err();
            assert!(matches!(e, FileAccessError::Link), "{path}: {e}");
        }
    }
    let e = c.make_dirs(&rel("up/made")).unwrap_err();
    assert!(matches!(e, FileAccessError::Link), "{e}");
    assert!(matches!(
        c.check_folder(&rel("up")),
        Err(FileAccessError::Link)
    ));
    assert_eq!(c.kind(&rel("to-host")).unwrap(), Some(Kind::Link));
    assert!(matches!(
        c.kind(&rel("up/host.txt")),
        Err(FileAccessError::Link)
    ));
    assert!(matches!(c.list(&rel("up"), 10), Err(FileAccessError::Link)));
    assert_eq!(std::fs::read_to_string(&s.outside).unwrap(), "host");
    assert!(!s.outside.with_file_name("new-on-host.txt").exists());
    assert!(!s.outside.with_file_name("made").exists());
}

/// The walk used where `openat2` is missing refuses the same links.
#[test]
fn the_walk_without_openat2_refuses_links_too() {
    let s = setup();
    std::fs::create_dir(s.ws.join("d")).unwrap();
    std::fs::write(s.ws.join("d/f.txt"), "f").unwrap();
    symlink(s.outside.parent().unwrap(), s.ws.join("up")).unwrap();
    symlink(&s.outside, s.ws.join("d/to-host")).unwrap();
    let root = unix::Root::open(&s.ws).unwrap();
    assert!(root.walk_for_tests(&rel("d/f.txt")).is_ok());
    for path in ["up/host.txt", "d/to-host"] {
        let e = root.walk_for_tests(&rel(path)).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ELOOP), "{path}");
    }
}

#[test]
fn fifos_and_hard_links_are_refused_untouched() {
    let s = setup();
    let fifo = s.ws.join("fifo");
    let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo on a fresh path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    let c = Confined::open(&s.ws).unwrap();
    let e = c.read(&rel("fifo"), 10, None).unwrap_err();
    assert_eq!(e.to_string(), "it is a FIFO, not a regular file");
    let e = c.write(&rel("fifo"), b"x", false).unwrap_err();
    assert_eq!(
        e.to_string(),
        "it is a FIFO or a device, not a regular file"
    );
    std::fs::write(s.ws.join("one"), "shared").unwrap();
    std::fs::hard_link(s.ws.join("one"), s.ws.join("two")).unwrap();
    assert!(matches!(
        c.write(&rel("two"), b"x", false),
        Err(FileAccessError::HardLinked)
    ));
    assert_eq!(std::fs::read_to_string(s.ws.join("one")).unwrap(), "shared");
    assert_eq!(
        c.list(&rel("one"), 10).unwrap_err().to_string(),
        "it is a file, not a folder"
    );
    assert_eq!(
        c.list(&rel("fifo"), 10).unwrap_err().to_string(),
        "it is a FIFO, not a folder"
    );
    assert!(matches!(
        c.write(&rel("one/below"), b"x", false),
        Err(FileAccessError::NotAFolderOnTheWay)
    ));
}

#[test]
fn listings_keep_the_first_names_and_count_the_rest() {
    let s = setup();
    for i in (0..50).rev() {
        std::fs::write(s.ws.join(format!("f{i:02}")), "x".repeat(i)).unwrap();
    }
    std::fs::create_dir(s.ws.join("a-dir")).unwrap();
    symlink("f01", s.ws.join("b-link")).unwrap();
    let c = Confined::open(&s.ws).unwrap();
    let listing = c.list(&RelPath::root(), 4).unwrap();
    let got: Vec<(String, Kind, u64)> = listing
        .entries
        .iter()
        .map(|e| (e.path.to_string(), e.kind, e.size))
        .collect();
    assert_eq!(
        got,
        [
            ("a-dir".to_string(), Kind::Dir, got[0].2),
            ("b-link".to_string(), Kind::Link, 3),
            ("f00".to_string(), Kind::File, 0),
            ("f01".to_string(), Kind::File, 1),
        ]
    );
    assert_eq!(listing.more, 48);
    assert_eq!(c.list(&RelPath::root(), 100).unwrap().more, 0);
}

#[test]
fn walks_stop_at_their_bounds() {
    let s = setup();
    let c = Confined::open(&s.ws).unwrap();
    c.write(&rel("b/inner.txt"), b"i", false).unwrap();
    c.write(&rel("a.txt"), b"a", false).unwrap();
    c.write(&rel("c.txt"), b"c", false).unwrap();
    symlink(s.outside.parent().unwrap(), s.ws.join("up")).unwrap();
    let walk = c.walk(10, 100);
    let paths: Vec<String> = walk.entries.iter().map(|e| e.path.to_string()).collect();
    assert_eq!(paths, ["a.txt", "b", "b/inner.txt", "c.txt", "up"]);
    assert!(walk.complete);
    assert_eq!(walk.seen, 5);
    let short = c.walk(2, 3);
    assert_eq!(short.entries.len(), 2);
    assert!(!short.complete);
    assert_eq!(short.seen, 3);
    // As deep as a task likes: the walk stops, and says so.
    let deep = (0..40)
        .map(|i| format!("d{i}"))
        .collect::<Vec<_>>()
        .join("/");
    c.make_dirs(&rel(&deep)).unwrap();
    assert!(!c.walk(1000, 10_000).complete);
}

#[test]
fn copies_are_bounded() {
    let s = setup();
    let c = Confined::open(&s.ws).unwrap();
    assert_eq!(c.write_from(&rel("x"), &b"12345"[..], 5).unwrap(), 5);
    assert!(matches!(
        c.write_from(&rel("x"), &b"123456"[..], 5),
        Err(FileAccessError::TooLarge { limit: 5, .. })
    ));
}

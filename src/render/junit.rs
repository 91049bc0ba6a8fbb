//! `junit.xml`: one testcase per task for CI dashboards (GitHub, GitLab, Jenkins). The
//! classname is the task's folder; `failed` is a failure carrying the evaluation's
//! reason, `error` and `timeout` are errors carrying the message, `cancelled` is
//! skipped; a task that passed after retries lists its failed attempts as flaky runs
//! (not those the runner's own stop cut short).

use std::borrow::Cow;
use std::io::{self, Write};
use std::time::Duration;

use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};

use crate::record::{RowSource, TaskRow, TaskStatus};
use crate::rundir::layout::OUTPUT_MD;

/// The JUnit XML of a run named `name`.
#[cfg(test)]
pub(crate) fn junit_xml(name: &str, records: &Vec<TaskRow>) -> io::Result<String> {
    let mut out = Vec::new();
    write_junit(&mut out, name, records)?;
    String::from_utf8(out).map_err(io::Error::other)
}

/// Writes the JUnit XML of a run named `name` to `out`, a test case at a time (a first
/// pass over the records counts what the opening tags say), so that a large run costs
/// no more memory than one case.
pub(crate) fn write_junit(
    out: &mut dyn Write,
    name: &str,
    records: &dyn RowSource,
) -> io::Result<()> {
    let mut totals = Totals::default();
    for r in records.rows() {
        totals.add(&r);
    }
    let mut w = Writer::new_with_indent(io::BufWriter::new(out), b' ', 4);
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let mut suites = BytesStart::new("testsuites");
    suites.push_attribute(("name", clean(&format!("ufo-batch {name}")).as_ref()));
    totals.counts(&mut suites, ["tests", "skipped", "failures", "errors"]);
    suites.push_attribute(("time", time(totals.seconds).as_str()));
    w.write_event(Event::Start(suites))?;
    let mut suite = BytesStart::new("testsuite");
    suite.push_attribute(("name", clean(name).as_ref()));
    totals.counts(&mut suite, ["tests", "skipped", "errors", "failures"]);
    suite.push_attribute(("time", time(totals.seconds).as_str()));
    if totals.tests == 0 {
        w.write_event(Event::Empty(suite))?;
    } else {
        w.write_event(Event::Start(suite))?;
        for r in records.rows() {
            test_case(&mut w, name, &r)?;
        }
        w.write_event(Event::End(BytesEnd::new("testsuite")))?;
    }
    w.write_event(Event::End(BytesEnd::new("testsuites")))?;
    w.write_indent()?;
    w.into_inner().flush()
}

/// What the opening tags count.
#[derive(Default)]
struct Totals {
    tests: u64,
    skipped: u64,
    failures: u64,
    errors: u64,
    seconds: f64,
}

impl Totals {
    fn add(&mut self, r: &TaskRow) {
        self.tests += 1;
        self.seconds += r.duration_s;
        match outcome(r.status) {
            Outcome::Success => {}
            Outcome::Skipped => self.skipped += 1,
            Outcome::Failure(_) => self.failures += 1,
            Outcome::Error(_) => self.errors += 1,
        }
    }

    /// Pushes the counts named, in that order (the two tags order them differently).
    fn counts(&self, tag: &mut BytesStart<'_>, names: [&str; 4]) {
        for name in names {
            let n = match name {
                "tests" => self.tests,
                "skipped" => self.skipped,
                "failures" => self.failures,
                _ => self.errors,
            };
            tag.push_attribute((name, n.to_string().as_str()));
        }
    }
}

/// How a task's status shows in JUnit, with the element's `type`.
enum Outcome {
    Success,
    Skipped,
    Failure(&'static str),
    Error(&'static str),
}

fn outcome(status: TaskStatus) -> Outcome {
    match status {
        TaskStatus::Passed => Outcome::Success,
        TaskStatus::Failed => Outcome::Failure("failed"),
        TaskStatus::Error => Outcome::Error("error"),
        TaskStatus::Timeout => Outcome::Error("timeout"),
        TaskStatus::Pending | TaskStatus::Running => Outcome::Error("unfinished"),
        TaskStatus::Cancelled | TaskStatus::Unsupported => Outcome::Skipped,
    }
}

fn test_case<W: Write>(w: &mut Writer<W>, name: &str, r: &TaskRow) -> io::Result<()> {
    let mut case = BytesStart::new("testcase");
    let short = r.id.as_str().rsplit('/').next().unwrap_or(r.id.as_str());
    case.push_attribute(("name", clean(short).as_ref()));
    let class = match r.id.group() {
        "" => clean(name),
        group => Cow::Owned(clean(group).replace('/', ".")),
    };
    case.push_attribute(("classname", class.as_ref()));
    case.push_attribute(("time", time(r.duration_s).as_str()));
    w.write_event(Event::Start(case))?;
    w.write_event(Event::Start(BytesStart::new("properties")))?;
    property(w, "output", &format!("{}/{OUTPUT_MD}", r.id))?;
    property(w, "attempts", &r.attempt_count().to_string())?;
    if let Some(c) = r.cost_usd {
        property(w, "cost_usd", &format!("{c:.6}"))?;
    }
    w.write_event(Event::End(BytesEnd::new("properties")))?;
    let reason = r.error.as_deref().unwrap_or_default();
    match outcome(r.status) {
        Outcome::Success => {
            for failure in &r.earlier_failures {
                let mut run = BytesStart::new("flakyError");
                run.push_attribute(("message", clean(failure).as_ref()));
                w.write_event(Event::Start(run))?;
                w.write_event(Event::End(BytesEnd::new("flakyError")))?;
            }
        }
        Outcome::Skipped => {
            let mut skipped = BytesStart::new("skipped");
            skipped.push_attribute(("message", clean(reason).as_ref()));
            w.write_event(Event::Empty(skipped))?;
        }
        Outcome::Failure(ty) => non_success(w, "failure", ty, reason)?,
        Outcome::Error(ty) => non_success(w, "error", ty, reason)?,
    }
    w.write_event(Event::End(BytesEnd::new("testcase")))
}

/// A `failure` or `error` element: the reason's first line as its message, the whole
/// reason as its text.
fn non_success<W: Write>(w: &mut Writer<W>, tag: &str, ty: &str, reason: &str) -> io::Result<()> {
    let mut element = BytesStart::new(tag);
    let message = crate::text::first_line(reason, 500);
    element.push_attribute(("message", clean(&message).as_ref()));
    element.push_attribute(("type", ty));
    w.write_event(Event::Start(element))?;
    w.write_event(Event::Text(BytesText::new(&clean(reason))))?;
    w.write_event(Event::End(BytesEnd::new(tag)))
}

fn property<W: Write>(w: &mut Writer<W>, name: &str, value: &str) -> io::Result<()> {
    let mut tag = BytesStart::new("property");
    tag.push_attribute(("name", name));
    tag.push_attribute(("value", clean(value).as_ref()));
    w.write_event(Event::Empty(tag))
}

/// Seconds as JUnit's `time` (never negative).
fn time(seconds: f64) -> String {
    let d = Duration::try_from_secs_f64(seconds.max(0.0)).unwrap_or_default();
    format!("{:.3}", d.as_secs_f64())
}

/// `text` without terminal escapes or control characters but line feeds (tasks'
/// commands print both), as `quick-junit` wrote it.
fn clean(text: &str) -> Cow<'_, str> {
    // Text with none of these passes through the escape stripper unchanged.
    let control = |c: char| (c < ' ' && c != '\n') || matches!(c, '\x7f'..='\u{9f}');
    if !text.contains(control) {
        return Cow::Borrowed(text);
    }
    let invalid = |c: char| matches!(c, '\x00'..='\x08' | '\x0b' | '\x0c' | '\x0e'..='\x1f');
    Cow::Owned(strip_ansi_escapes::strip_str(text).replace(invalid, ""))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{AttemptRecord, AttemptStatus, SessionType, ShapeName, TaskRecord};
    use crate::task::TaskId;
    use crate::units::Timestamp;

    fn attempt(attempt: u32, status: AttemptStatus, error: Option<&str>) -> AttemptRecord {
        AttemptRecord {
            attempt,
            started: Timestamp::now(),
            finished: None,
            status,
            error: error.map(str::to_string),
            device: None,
        }
    }

    fn record(
        id: &str,
        status: TaskStatus,
        error: Option<&str>,
        attempts: Vec<AttemptRecord>,
    ) -> TaskRecord {
        let mut r = TaskRecord::new(
            TaskId::parse(id).unwrap(),
            String::new(),
            String::new(),
            ShapeName::RecordedPlan,
            SessionType::FollowerSession,
            "r".to_string(),
        );
        r.status = status;
        r.error = error.map(str::to_string);
        r.attempts = attempts;
        r.duration_s = 1.2345;
        r
    }

    #[test]
    fn attempts_cut_short_by_the_runner_are_not_flaky_runs() {
        let r = record(
            "t",
            TaskStatus::Passed,
            None,
            vec![
                attempt(1, AttemptStatus::Interrupted, Some("the runner stopped")),
                attempt(2, AttemptStatus::Cancelled, Some("the run was stopped")),
                attempt(3, AttemptStatus::Error, Some("the disk was full")),
                attempt(4, AttemptStatus::Passed, None),
            ],
        );
        let xml = junit_xml("run", &vec![TaskRow::of(&r)]).unwrap();
        assert_eq!(xml.matches("<flakyError").count(), 1, "{xml}");
        assert!(xml.contains("the disk was full"), "{xml}");
        assert!(!xml.contains("the runner stopped"), "{xml}");
    }

    /// The document as `quick-junit` (which this writer replaced, as it holds the
    /// whole document in memory) builds it: the streamed one must be the same so that
    /// CI dashboards read it as before.
    fn reference(name: &str, records: &[TaskRecord]) -> String {
        use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestRerun, TestSuite};
        let mut report = Report::new(format!("ufo-batch {name}"));
        let mut suite = TestSuite::new(name);
        let mut total = 0.0;
        for r in records {
            total += r.duration_s;
            let reason = r.error.clone().unwrap_or_default();
            let non_success = |kind, ty: &str| {
                let mut s = TestCaseStatus::non_success(kind);
                s.set_message(crate::text::first_line(&reason, 500));
                s.set_type(ty);
                s.set_description(reason.clone());
                s
            };
            let status = match r.status {
                TaskStatus::Passed => TestCaseStatus::Success {
                    flaky_runs: r.attempts[..r.attempts.len() - 1]
                        .iter()
                        .filter(|a| {
                            !matches!(
                                a.status,
                                AttemptStatus::Interrupted | AttemptStatus::Cancelled
                            )
                        })
                        .map(|a| {
                            let mut run = TestRerun::new(NonSuccessKind::Error);
                            run.set_message(
                                a.error.clone().unwrap_or_else(|| a.status.to_string()),
                            );
                            run
                        })
                        .collect(),
                },
                TaskStatus::Failed => non_success(NonSuccessKind::Failure, "failed"),
                TaskStatus::Error => non_success(NonSuccessKind::Error, "error"),
                TaskStatus::Timeout => non_success(NonSuccessKind::Error, "timeout"),
                TaskStatus::Pending | TaskStatus::Running => {
                    non_success(NonSuccessKind::Error, "unfinished")
                }
                TaskStatus::Cancelled | TaskStatus::Unsupported => {
                    let mut s = TestCaseStatus::skipped();
                    s.set_message(reason.clone());
                    s
                }
            };
            let short = r.id.as_str().rsplit('/').next().unwrap();
            let mut case = TestCase::new(short, status);
            case.set_classname(match r.id.group() {
                "" => name.to_string(),
                group => group.replace('/', "."),
            });
            case.set_time(Duration::from_secs_f64(r.duration_s));
            case.add_property(("output", format!("{}/{OUTPUT_MD}", r.id).as_str()));
            case.add_property(("attempts", r.attempts.len().to_string().as_str()));
            if let Some(c) = r.cost_usd {
                case.add_property(("cost_usd", format!("{c:.6}").as_str()));
            }
            suite.add_test_case(case);
        }
        suite.set_time(Duration::from_secs_f64(total));
        report.add_test_suite(suite);
        report.set_time(Duration::from_secs_f64(total));
        report.to_string().unwrap()
    }

    #[test]
    fn the_streamed_document_is_the_one_quick_junit_builds() {
        let messy = "step 1 `grep \'<a>\' && \"b\"` failed\r\n\x1b[31mred\x1b[0m \x07bell \u{9b}31m\x7f\ttab\nlast line";
        let mut records = [
            record(
                "plain",
                TaskStatus::Passed,
                None,
                vec![attempt(1, AttemptStatus::Passed, None)],
            ),
            record(
                "group/sub/flaky",
                TaskStatus::Passed,
                None,
                vec![
                    attempt(1, AttemptStatus::Failed, Some(messy)),
                    attempt(2, AttemptStatus::Error, None),
                    attempt(3, AttemptStatus::Interrupted, Some("stopped")),
                    attempt(4, AttemptStatus::Passed, None),
                ],
            ),
            record(
                "g/failed",
                TaskStatus::Failed,
                Some(messy),
                vec![attempt(1, AttemptStatus::Failed, Some(messy))],
            ),
            record(
                "error",
                TaskStatus::Error,
                Some("invalid task file: <&>"),
                vec![],
            ),
            record(
                "g/timeout",
                TaskStatus::Timeout,
                Some("timed out after 1s"),
                vec![],
            ),
            record("pending", TaskStatus::Pending, None, vec![]),
            record(
                "g/tabs",
                TaskStatus::Error,
                Some("col1\tcol2\r\nnext"),
                vec![],
            ),
            record(
                "running",
                TaskStatus::Running,
                Some("the runner was killed"),
                vec![],
            ),
            record(
                "cancelled",
                TaskStatus::Cancelled,
                Some("the run was stopped \"now\""),
                vec![],
            ),
        ];
        records[0].cost_usd = Some(0.0123456789);
        records[2].duration_s = 0.0005;
        records[3].duration_s = 0.0;
        let rows: Vec<TaskRow> = records.iter().map(TaskRow::of).collect();
        for name in ["run", "a <b> & \"c\" \x1b[1mbold"] {
            // One difference, on purpose: a newline inside an attribute is written as
            // `&#10;`, which XML readers keep as a newline (quick-junit's older quick-xml
            // wrote it bare, which they read as a space).
            let streamed = junit_xml(name, &rows).unwrap().replace("&#10;", "\n");
            assert_eq!(streamed, reference(name, &records));
        }
        assert_eq!(junit_xml("run", &vec![]).unwrap(), reference("run", &[]));
    }
}

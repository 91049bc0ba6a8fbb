//! `report.html` in a real browser (Debian's headless chromium, driven through the
//! DevTools protocol): the page of the sample plans opens from disk, filters with the
//! status menu and the keyboard, sorts, opens a failing task's page in its panel with a
//! mouse click, and logs no console error on the way.

use std::path::Path;
use std::time::Duration;

use serde_json::json;

use crate::cdp::Browser;
use crate::helpers::Project;

const VISIBLE: &str =
    "[...document.querySelectorAll('#tasks tbody tr')].map(r => r.cells[0].textContent)";

#[test]
#[cfg_attr(skip_browser, ignore = "UFO_BATCH_SKIP_TESTS: needs browser")]
fn the_report_page_filters_sorts_and_opens_a_failing_task_without_errors() {
    crate::cdp::available();
    let p = Project::new();
    let plans = Path::new(env!("CARGO_MANIFEST_DIR")).join("plans");
    let out = p.cmd(&["run", plans.to_str().unwrap(), "--progress", "quiet"]);
    out.expect_code(1);
    let report = out.run_dir("plans").join("report.html");
    let mut b = Browser::start(1300, 900);
    b.open(&format!("file://{}", report.display()));
    assert_eq!(b.eval(&format!("{VISIBLE}.length")), 16);
    // The failures come first without any filter.
    assert_eq!(
        b.eval(&format!("{VISIBLE}.slice(0, 2)")),
        json!(["failing/divergent_replay", "failing/wrong_total"])
    );

    // The status menu: what did not pass.
    b.eval("(() => { const s = document.getElementById('f-status'); s.value = 'not-passed'; s.dispatchEvent(new Event('change')); })()");
    assert_eq!(
        b.eval(VISIBLE),
        json!(["failing/divergent_replay", "failing/wrong_total"])
    );
    assert_eq!(
        b.eval("document.getElementById('shown').textContent"),
        "2 of 16 tasks"
    );
    // The keyboard: `/` goes to the search box, and typing narrows the table (by id and
    // reason only: "passed" is in no id or reason of what is shown).
    b.key("/");
    assert_eq!(b.eval("document.activeElement.id"), "f-text");
    b.call("Input.insertText", json!({"text": "0.0"}));
    assert_eq!(
        b.eval(&format!("{VISIBLE}.length")),
        0,
        "the durations (0.0x s) are not searched"
    );
    b.eval("(() => { const t = document.getElementById('f-text'); t.value = ''; t.dispatchEvent(new Event('input')); })()");
    b.call("Input.insertText", json!({"text": "total"}));
    assert_eq!(b.eval(VISIBLE), json!(["failing/wrong_total"]));
    b.call("Input.insertText", json!({"text": "-nothing"}));
    assert_eq!(b.eval(&format!("{VISIBLE}.length")), 0);
    b.eval("(() => { const t = document.getElementById('f-text'); t.value = ''; t.dispatchEvent(new Event('input')); })()");

    // Sorting by steps with the mouse: ascending, then descending.
    b.click("th[data-key=steps] button");
    let steps =
        "[...document.querySelectorAll('#tasks tbody tr')].map(r => +r.cells[3].textContent)";
    assert_eq!(b.eval(steps), json!([1, 2]));
    b.click("th[data-key=steps] button");
    assert_eq!(b.eval(steps), json!([2, 1]));
    // The rows the script drew show a cost as the page's first rows do: a recorded
    // plan spends nothing, a dash, not $0.0000.
    let costs =
        "[...document.querySelectorAll('#tasks tbody tr')].map(r => r.cells[4].textContent)";
    assert_eq!(b.eval(costs), json!(["—", "—"]));

    // A failing task opens in the panel with a click.
    b.click("a.task[href*='wrong_total']");
    b.wait_for("document.getElementById('panel').open");
    let wanted = "failing/wrong_total/task.html";
    let clock = std::time::Instant::now();
    loop {
        let tree = b.call("Page.getFrameTree", json!({}));
        let child = tree["frameTree"]["childFrames"][0]["frame"]["url"].clone();
        if child.as_str().is_some_and(|u| u.ends_with(wanted)) {
            break;
        }
        assert!(clock.elapsed() < Duration::from_secs(20), "{tree}");
        b.pump(Duration::from_millis(100));
    }
    b.pump(Duration::from_millis(500));
    let png = b.screenshot();
    assert!(png.starts_with(b"\x89PNG"), "a screenshot");
    let shot = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/report-page.png");
    std::fs::write(&shot, &png).unwrap();
    // Escape closes it, also when the task's page (a frame of its own) has the focus.
    b.key("Escape");
    b.wait_for("!document.getElementById('panel').open");
    b.click("a.task[href*='wrong_total']");
    b.wait_for("document.getElementById('panel').open");
    b.pump(Duration::from_millis(500));
    b.click("#panel-frame");
    b.key("Escape");
    b.wait_for("!document.getElementById('panel').open");

    let errors = b.errors();
    assert!(errors.is_empty(), "console errors: {errors:#?}");
}

#[test]
#[cfg_attr(skip_browser, ignore = "UFO_BATCH_SKIP_TESTS: needs browser")]
fn a_large_runs_page_lists_every_task_a_page_at_a_time() {
    crate::cdp::available();
    let p = Project::new();
    let n = 600;
    for i in 0..n {
        // The last task fails its expectation: it must still come first.
        let mut action = json!({"action": "execute_command", "parameters": {"command": "true"}});
        if i == n - 1 {
            action["expect"] = json!({"stdout": "no"});
        }
        p.task(
            &format!("g{}/t{i:04}.json", i % 3),
            json!({"request": format!("task {i}"), "actions": [action]}),
        );
    }
    let out = p.cmd(&[
        "run",
        "tasks",
        "--name",
        "big",
        "--jobs",
        "16",
        "--progress",
        "quiet",
    ]);
    out.expect_code(1);
    let report = out.run_dir("big").join("report.html");
    let mut b = Browser::start(1300, 900);
    b.open(&format!("file://{}", report.display()));
    let shown = "document.getElementById('shown').textContent";
    assert_eq!(b.eval(&format!("{VISIBLE}.length")), 500, "a page of rows");
    assert_eq!(
        b.eval(&format!("{VISIBLE}[0]")),
        "g2/t0599",
        "the failure first"
    );
    assert_eq!(b.eval(shown), "600 of 600 tasks, the first 500 shown");
    assert_eq!(
        b.eval("document.getElementById('more-note').hidden"),
        true,
        "the note for readers without JavaScript is hidden"
    );
    b.click("#show-more");
    assert_eq!(b.eval(&format!("{VISIBLE}.length")), 600);
    assert_eq!(b.eval("document.getElementById('pager').hidden"), true);
    // A filter starts again from the first page, over every task.
    b.key("/");
    b.call("Input.insertText", json!({"text": "t05"}));
    assert_eq!(b.eval(&format!("{VISIBLE}.length")), 100);
    assert_eq!(b.eval(shown), "100 of 600 tasks");
    b.eval("(() => { const t = document.getElementById('f-text'); t.value = ''; t.dispatchEvent(new Event('input')); })()");
    b.click("th[data-key=id] button");
    b.click("th[data-key=id] button");
    assert_eq!(
        b.eval(&format!("{VISIBLE}[0]")),
        "g2/t0599",
        "id, descending"
    );
    assert_eq!(b.eval(&format!("{VISIBLE}[499]")), "g0/t0300");
    b.click("#show-all");
    assert_eq!(b.eval(&format!("{VISIBLE}.length")), 600);
    // A task drawn by the script opens like one written in the page.
    b.click("a.task[href='g0/t0000/task.html']");
    b.wait_for("document.getElementById('panel').open");
    let errors = b.errors();
    assert!(errors.is_empty(), "console errors: {errors:#?}");
}

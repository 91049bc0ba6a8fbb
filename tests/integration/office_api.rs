//! UFO's Office API tools (its hybrid AppAgent) on real LibreOffice documents under a
//! virtual display: each tool's change checked in the file it saved, each recording
//! replayed, the failures that say why (a text not found, a sheet or a slide that is
//! not there, a bad colour, a document closed, the wrong app), an AppAgent that mixes
//! UI and API tools, and keys with no control typed into the window. Without the
//! desktop stack they fail (`desktop::desktop_stack`).

use std::io::Read;
use std::path::Path;

use serde_json::{Value, json};

use crate::desktop::desktop_stack;
use crate::desktop_agents::{host_finish, office_files, on, select, steps};
use crate::helpers::{Output, Project, read_json, run_binary};
use crate::llm::{llm_project, run_with};
use crate::mock_llm::{MockLlm, Reply, marker};

/// A member of a zip document (docx, xlsx, pptx).
fn member(path: &Path, name: &str) -> String {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut zip = zip::ZipArchive::new(file).unwrap();
    let mut text = String::new();
    zip.by_name(name)
        .unwrap_or_else(|e| panic!("{}: {name}: {e}", path.display()))
        .read_to_string(&mut text)
        .unwrap();
    text
}

/// Each step's tool, result status and what it answered (its text, or its error).
fn answers(out: &Output, id: &str) -> Vec<(String, String, String)> {
    steps(out, id)
        .iter()
        .map(|s| {
            let action = &s["action"][0];
            let result = &action["result"];
            let said = result["error"]
                .as_str()
                .map(str::to_string)
                .or_else(|| result["result"]["text"].as_str().map(str::to_string))
                .unwrap_or_else(|| result["result"].to_string());
            (
                action["function"].as_str().unwrap_or_default().to_string(),
                result["status"].as_str().unwrap_or_default().to_string(),
                said,
            )
        })
        .collect()
}

fn plan(request: &str, object: &str, actions: Value) -> Value {
    json!({"request": request, "object": object, "timeout": 240, "actions": actions})
}

#[test]
#[cfg_attr(skip_desktop, ignore = "UFO_BATCH_SKIP_TESTS: needs desktop")]
fn ufos_office_api_tools_change_the_live_documents_and_replay() {
    desktop_stack();
    let p = Project::new();
    office_files(&p);
    p.task(
        "writer.json",
        plan(
            "Word's API tools",
            "report.docx",
            json!([
                {"action": "keyboard_input", "parameters": {"keys": "Intro paragraph{ENTER}{ENTER}The target phrase is here.{ENTER}Last one."}},
                {"action": "insert_table", "parameters": {"rows": 3, "columns": 2}, "expect": {"text": "Table with 3 rows and 2 columns is inserted."}},
                {"action": "select_text", "parameters": {"text": "target phrase"}, "expect": {"text": "Text target phrase is selected."}},
                {"action": "set_font", "parameters": {"font_name": "Liberation Serif", "font_size": 20}, "expect": {"text": "Font is set to Liberation Serif. Font size is set to 20."}},
                // Non-empty paragraphs, from 1: the third is "Last one.".
                {"action": "select_paragraph", "parameters": {"start_index": 3, "end_index": 3}, "expect": {"text": "Paragraph from 3 to 3 is selected."}},
                {"action": "set_font", "parameters": {"font_size": 14}},
                {"action": "select_table", "parameters": {"number": 1}, "expect": {"text": "Table 1 is selected."}},
                // Word's default format is PDF, in the document's folder, under its name.
                {"action": "save_as", "parameters": {}, "expect": {"text": "Document is saved to report.pdf."}},
                {"action": "save_as", "parameters": {"file_dir": "out", "file_name": "report_saved", "file_ext": "docx"}, "expect": {"text": "Document is saved to out/report_saved.docx."}}
            ]),
        ),
    );
    p.task(
        "calc.json",
        plan(
            "Excel's API tools",
            "budget.xlsx",
            json!([
                {"action": "insert_excel_table", "parameters": {"table": [["Name", "Age", "Gender"], ["Alice", "30", "Female"], ["Bob", 25, "Male"], ["Sum", "=SUM(B2:B3)", ""]], "sheet_name": "Sheet1", "start_row": 1, "start_col": 1},
                 "expect": {"text": "Table inserted successfully into Sheet1."}},
                {"action": "get_range_values", "parameters": {"sheet_name": "Sheet1", "start_row": 1, "start_col": 1, "end_row": -1, "end_col": -1},
                 "expect": {"text": "[[\"Name\",\"Age\",\"Gender\"],[\"Alice\",30.0,\"Female\"],[\"Bob\",25.0,\"Male\"],[\"Sum\",55.0,null]]"}},
                {"action": "select_table_range", "parameters": {"sheet_name": "Sheet1", "start_row": 1, "start_col": 1, "end_row": 3, "end_col": 3}, "expect": {"text": "Range 1:1 to 3:3 is selected."}},
                {"action": "reorder_columns", "parameters": {"sheet_name": "Sheet1", "desired_order": ["Gender", "Name", "Age"]}},
                {"action": "save_as", "parameters": {"file_name": "budget_out", "file_ext": ".xlsx"}, "expect": {"text": "Document is saved to budget_out.xlsx."}},
                // Excel's default format is CSV.
                {"action": "save_as", "parameters": {"file_name": "budget_out"}, "expect": {"text": "Document is saved to budget_out.csv."}}
            ]),
        )
        .as_object()
        .cloned()
        .map(|mut t| {
            t.insert(
                "evaluate".into(),
                json!([{"type": "cell_equals", "path": "budget_out.xlsx", "cell": "A1", "value": "Gender"},
                       {"type": "cell_equals", "path": "budget_out.xlsx", "cell": "C3", "value": 25}]),
            );
            Value::Object(t)
        })
        .unwrap(),
    );
    p.task(
        "impress.json",
        plan(
            "PowerPoint's API tools",
            "deck.pptx",
            json!([
                {"action": "set_background_color", "parameters": {"color": "#FF0000", "slide_index": [1]}, "expect": {"text": "Successfully Set the background color to #FF0000 for slide(s) [1]."}},
                // PowerPoint's default format is PPTX.
                {"action": "save_as", "parameters": {"file_name": "deck_red"}, "expect": {"text": "Document is saved to deck_red.pptx."}},
                {"action": "save_as", "parameters": {"file_name": "deck_red", "file_ext": ".pdf"}, "expect": {"text": "Document is saved to deck_red.pdf."}}
            ]),
        ),
    );
    let out = p.run(&["--jobs", "3"]);
    for id in ["writer", "calc", "impress"] {
        assert_eq!(
            out.status(id)["status"],
            "passed",
            "{id}: {:?}\n{}",
            answers(&out, id),
            out.task_file(id, "task.log")
        );
    }
    let run = out.run_dir("proj");

    // Writer: the table, the fonts, the PDF.
    let docx = member(
        &run.join("writer/workspace/out/report_saved.docx"),
        "word/document.xml",
    );
    assert_eq!(docx.matches("<w:tbl>").count(), 1, "{docx}");
    let phrase = docx
        .find(">target phrase<")
        .expect("the phrase is its own run");
    let run_props = &docx[docx[..phrase].rfind("<w:r>").unwrap()..phrase];
    assert!(
        run_props.contains(r#"w:ascii="Liberation Serif""#)
            && run_props.contains(r#"<w:sz w:val="40"/>"#),
        "{run_props}"
    );
    let last = docx.find(">Last one.<").unwrap();
    let last_props = &docx[docx[..last].rfind("<w:r>").unwrap()..last];
    assert!(last_props.contains(r#"<w:sz w:val="28"/>"#), "{last_props}");
    let pdf = std::fs::read(run.join("writer/workspace/report.pdf")).unwrap();
    assert!(pdf.starts_with(b"%PDF-"));

    // Calc: the CSV has the columns in their new order.
    let csv = std::fs::read_to_string(run.join("calc/workspace/budget_out.csv")).unwrap();
    assert!(
        csv.starts_with(
            "\"Gender\",\"Name\",\"Age\"\n\"Female\",\"Alice\",30\n\"Male\",\"Bob\",25\n"
        ),
        "{csv}"
    );
    let values = &steps(&out, "calc")[1]["action"][0]["result"]["result"]["values"];
    assert_eq!(values[3], json!(["Sum", 55.0, null]), "{values}");

    // Impress: slide 1 red, slide 2 as it was; the PDF.
    let pptx = run.join("impress/workspace/deck_red.pptx");
    let slide = |n: u32| member(&pptx, &format!("ppt/slides/slide{n}.xml"));
    assert!(
        slide(1).contains(r#"<p:bg><p:bgPr><a:solidFill><a:srgbClr val="ff0000"/>"#),
        "{}",
        slide(1)
    );
    assert!(!slide(2).contains("ff0000"), "{}", slide(2));
    let pdf = std::fs::read(run.join("impress/workspace/deck_red.pdf")).unwrap();
    assert!(pdf.starts_with(b"%PDF-"));

    // The recordings replay, each API tool's answer compared.
    let plan = read_json(&run.join("writer/plan.json"));
    assert_eq!(plan["actions"][1]["action"], "insert_table", "{plan}");
    assert_eq!(
        plan["actions"][1]["expect"]["text"], "Table with 3 rows and 2 columns is inserted.",
        "{plan}"
    );
    let elsewhere = tempfile::tempdir().unwrap();
    let replay = run_binary(
        elsewhere.path(),
        &[
            "run",
            run.to_str().unwrap(),
            "--out",
            "replays",
            "--jobs",
            "3",
            "--progress",
            "lines",
        ],
        &[],
    );
    assert_eq!(replay.code, 0, "{}\n{}", replay.stdout, replay.stderr);
    assert!(
        replay.stderr.contains("3 tasks: 3 passed"),
        "{}",
        replay.stderr
    );
}

#[test]
#[cfg_attr(skip_desktop, ignore = "UFO_BATCH_SKIP_TESTS: needs desktop")]
fn an_api_tool_that_cannot_act_fails_saying_why() {
    desktop_stack();
    let p = Project::new();
    office_files(&p);
    let fails = |tool: &str, parameters: Value| json!({"action": tool, "parameters": parameters, "expect": {"status": "failure"}});
    p.task(
        "writer.json",
        plan(
            "failures on Writer",
            "report.docx",
            json!([
                fails("select_text", json!({"text": "nowhere"})),
                fails("select_table", json!({"number": 2})),
                fails("set_font", json!({"font_size": 12})),
                fails("insert_excel_table", json!({"table": [["x"]], "sheet_name": "Sheet1", "start_row": 1, "start_col": 1})),
                fails("save_as", json!({"file_dir": "../outside", "file_ext": ".pdf"})),
                fails("save_as", json!({"file_dir": "/tmp", "file_ext": ".pdf"})),
                // The document closed (Ctrl+W): nothing is left to act on.
                {"action": "keyboard_input", "parameters": {"keys": "^w"}},
                {"action": "wait", "parameters": {"seconds": 1}},
                fails("insert_table", json!({"rows": 2, "columns": 2}))
            ]),
        ),
    );
    p.task(
        "calc.json",
        plan(
            "failures on Calc",
            "budget.xlsx",
            json!([
                fails(
                    "insert_excel_table",
                    json!({"table": [["x"]], "sheet_name": "Nope", "start_row": 1, "start_col": 1})
                ),
                fails(
                    "reorder_columns",
                    json!({"sheet_name": "Sheet1", "desired_order": ["Nobody"]})
                )
            ]),
        ),
    );
    p.task(
        "impress.json",
        plan(
            "failures on Impress",
            "deck.pptx",
            json!([
                fails("set_background_color", json!({"color": "notacolour"})),
                fails(
                    "set_background_color",
                    json!({"color": "00FF00", "slide_index": [9]})
                )
            ]),
        ),
    );
    p.file("files/note.txt", "a note\n");
    p.task(
        "editor.json",
        plan(
            "an API tool on a text editor",
            "note.txt",
            json!([fails("insert_table", json!({"rows": 2, "columns": 2}))]),
        ),
    );
    let out = p.run(&["--jobs", "2"]);
    let said = |id: &str| -> Vec<String> {
        assert_eq!(
            out.status(id)["status"],
            "passed",
            "{id}: {:?}",
            answers(&out, id)
        );
        answers(&out, id)
            .into_iter()
            .filter(|(_, status, _)| status == "failure")
            .map(|(_, _, why)| why)
            .collect()
    };
    assert_eq!(
        said("writer"),
        [
            "Text nowhere is not found.",
            "Table number 2 is out of range.",
            "No text is selected to set the font: select it first (select_text, select_paragraph)",
            "`insert_excel_table` is an API tool of Excel (LibreOffice Calc), and this task's app is Word (LibreOffice Writer)",
            "Path '../outside' contains directory traversal sequences",
            "'/tmp' is outside the task's workspace, where files are saved",
            "no Writer (Word) document is open",
        ]
    );
    let calc = said("calc");
    assert_eq!(
        calc[0],
        "Error occurred while inserting table into Nope: no sheet named 'Nope'"
    );
    assert!(calc[1].contains("Nobody"), "{calc:?}");
    assert_eq!(
        said("impress"),
        [
            "Failed to set the background color: 'notacolour' is not a colour as hex RRGGBB (such as FF0000)",
            "Failed to set the background color: no slide 9 (the slides are 1 to 2)",
        ]
    );
    assert_eq!(
        said("editor"),
        [
            "`insert_table` is an API tool of Word (LibreOffice Writer), and this task's app is a text editor"
        ]
    );
    // Nothing was written outside the workspace.
    assert!(!out.run_dir("proj").join("writer/outside").exists());
}

#[test]
#[cfg_attr(skip_desktop, ignore = "UFO_BATCH_SKIP_TESTS: needs desktop")]
fn keys_with_no_control_are_typed_into_the_window() {
    desktop_stack();
    let p = Project::new();
    p.file("files/note.txt", "first line\n");
    p.task(
        "keys.json",
        plan(
            "type into the note",
            "note.txt",
            json!([
                // UFO's AppAgent: keys with no control, then with `control_focus: false`
                // ("the hotkeys will operate on the application window").
                {"action": "keyboard_input", "parameters": {"keys": "^{END}hello{ENTER}"}},
                {"action": "keyboard_input", "parameters": {"id": "99", "name": "not there", "keys": "again^s", "control_focus": false}},
                {"action": "texts", "parameters": {"control_type": "Edit"}, "expect": {"text": "first line\nhello\nagain"}},
                // UFO's data collection tools, in its shapes.
                {"action": "get_desktop_app_info", "parameters": {}},
                {"action": "get_desktop_app_target_info", "parameters": {"remove_empty": true, "refresh_app_windows": true}},
                {"action": "get_app_window_controls_info", "parameters": {"field_list": ["label", "control_text", "control_type"]}},
                {"action": "get_app_window_controls_target_info", "parameters": {"field_list": ["control_text", "control_type", "control_rect"]}},
                {"action": "get_app_window_info", "parameters": {"field_list": ["control_text", "control_rect"]}}
            ]),
        ),
    );
    let out = p.run(&[]);
    assert_eq!(
        out.status_of("keys"),
        "passed",
        "{:?}",
        answers(&out, "keys")
    );
    let note =
        std::fs::read_to_string(out.run_dir("proj").join("keys/workspace/note.txt")).unwrap();
    assert!(note.starts_with("first line\nhello\nagain"), "{note:?}");
    let log = steps(&out, "keys");
    let result = |i: usize| log[i]["action"][0]["result"]["result"].clone();
    assert!(result(0)["to"].is_string(), "{}", result(0));
    let apps = result(3);
    assert_eq!(apps[0]["id"], "1", "{apps}");
    assert_eq!(apps[0]["type"], "Window", "{apps}");
    assert_eq!(apps[0]["kind"], "window", "{apps}");
    assert!(
        apps[0]["name"].as_str().unwrap().contains("Mousepad"),
        "{apps}"
    );
    assert_eq!(result(4)[0]["rect"], Value::Null);
    let controls = result(5);
    assert!(
        controls
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["control_text"] == "File"
                && c["control_type"] == "MenuItem"
                && c["label"].is_string()),
        "{controls}"
    );
    let targets = result(6);
    assert!(
        targets
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["kind"] == "control" && t["rect"].as_array().is_some_and(|r| r.len() == 4)),
        "{targets}"
    );
    let window = result(7);
    assert!(
        window["control_text"]
            .as_str()
            .unwrap()
            .contains("Mousepad"),
        "{window}"
    );
    assert_eq!(
        window["control_rect"].as_array().map(Vec::len),
        Some(4),
        "{window}"
    );
}

#[test]
#[cfg_attr(skip_desktop, ignore = "UFO_BATCH_SKIP_TESTS: needs desktop")]
fn an_app_agent_mixes_ui_and_api_tools_and_its_recording_replays() {
    desktop_stack();
    let mock = MockLlm::start();
    mock.script(
        "mixed",
        vec![
            select("report", "ASSIGN", "Write the heading, then export the report as PDF"),
            on(
                "",
                "Document",
                "keyboard_input",
                json!({"keys": "Quarterly report"}),
                "CONTINUE",
            ),
            Reply::Content(
                json!({"observation": "the heading is there", "thought": "export with the API",
                       "action": {"function": "save_as", "arguments": {"file_ext": ".pdf"}, "status": "FINISH"},
                       "plan": [], "comment": "exported", "save_screenshot": {"save": false, "reason": ""}})
                .to_string(),
            ),
            host_finish(),
        ],
    );
    let p = llm_project();
    office_files(&p);
    p.task(
        "mixed.json",
        json!({"task": format!("Write a heading into the report and export it as PDF {}", marker("mixed")),
               "object": "report.docx", "close": true, "timeout": 240,
               "evaluate": [{"type": "file_exists", "path": "report.pdf"}]}),
    );
    let out = run_with(&p, &mock, &[]);
    out.expect_code(0);
    let status = out.status("mixed");
    assert_eq!(status["status"], "passed", "{status}");

    // The AppAgent was offered Word's API tools beside the UI tools (in its prompt; its
    // reply calling one was taken); the HostAgent was not.
    let requests = mock.received_for("mixed");
    let system = |i: usize| {
        requests[i].body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(!system(0).contains("insert_table"), "{}", system(0));
    for tool in ["`insert_table`", "`save_as`", "`set_font`", "`click_input`"] {
        assert!(system(1).contains(tool), "{tool}: {}", system(1));
    }
    assert!(!system(1).contains("`insert_excel_table`"), "{}", system(1));

    let log = steps(&out, "mixed");
    assert_eq!(log[2]["function_call"], "save_as", "{}", log[2]);
    assert_eq!(
        log[2]["action"][0]["result"]["result"]["text"], "Document is saved to report.pdf.",
        "{}",
        log[2]
    );
    let run = out.run_dir("proj");
    assert!(
        std::fs::read(run.join("mixed/workspace/report.pdf"))
            .unwrap()
            .starts_with(b"%PDF-")
    );

    // The recording replays with no LLM: the UI step and the API step.
    let plan = read_json(&run.join("mixed/plan.json"));
    let tools: Vec<&str> = plan["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["action"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        ["select_application_window", "keyboard_input", "save_as"],
        "{plan}"
    );
    let elsewhere = tempfile::tempdir().unwrap();
    let replay = run_binary(
        elsewhere.path(),
        &[
            "run",
            run.to_str().unwrap(),
            "--out",
            "replays",
            "--progress",
            "lines",
        ],
        &[],
    );
    assert_eq!(replay.code, 0, "{}\n{}", replay.stdout, replay.stderr);
    let replayed = read_json(
        &elsewhere
            .path()
            .join("replays/proj-replay/mixed/status.json"),
    );
    assert_eq!(replayed["status"], "passed", "{replayed}");
}

/// A valid xlsx of one sheet `S` with the cells `cells` (reference, number).
fn sheet_xlsx(cells: &[(&str, u32)]) -> Vec<u8> {
    let rows: String = cells
        .iter()
        .map(|(at, v)| {
            let row: String = at.chars().filter(char::is_ascii_digit).collect();
            format!(r#"<row r="{row}"><c r="{at}" t="n"><v>{v}</v></c></row>"#)
        })
        .collect();
    crate::documents::workbook(|sheet| {
        write!(
            sheet,
            r#"<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>{rows}</sheetData></worksheet>"#
        )
    })
}

/// The peak resident memory (KiB) and the data-size limit of the LibreOffice
/// processes working in `dir`, sampled until `running` says the run ended.
fn watch_office(dir: &Path, running: impl Fn() -> bool) -> (u64, Option<String>) {
    let (mut peak, mut limit) = (0u64, None);
    while running() {
        for pid in crate::helpers::processes_working_in(dir) {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            if !String::from_utf8_lossy(&cmdline).contains("soffice") {
                continue;
            }
            peak = peak.max(crate::helpers::peak_rss_kib(pid).unwrap_or(0));
            let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap_or_default();
            if let Some(line) = limits.lines().find(|l| l.starts_with("Max data size")) {
                limit = line.split_whitespace().nth(3).map(str::to_string);
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    (peak, limit)
}

/// An Office call that would size work past its bound fails as the agent's action,
/// whether its bound is seen in its arguments or only in the document (a `-1` end over a
/// sheet used from A1 to AMJ1048576: a billion cells), on a desktop whose programs have
/// the task's memory limit; and a save through a link in the workspace that leads out of
/// it is refused on the whole joined path.
#[test]
#[cfg_attr(skip_desktop, ignore = "UFO_BATCH_SKIP_TESTS: needs desktop")]
fn an_oversize_office_request_fails_as_the_agents_action_on_a_memory_capped_desktop() {
    desktop_stack();
    let p = Project::new();
    p.file("ufo-batch.toml", "[sandbox]\nmemory = \"4GiB\"\n");
    let files = p.path().join("files");
    std::fs::create_dir_all(&files).unwrap();
    std::fs::write(
        files.join("wide.xlsx"),
        sheet_xlsx(&[("A1", 1), ("AMJ1048576", 2)]),
    )
    .unwrap();
    let fails = |tool: &str, parameters: Value| json!({"action": tool, "parameters": parameters, "expect": {"status": "failure"}});
    p.task(
        "wide.json",
        plan(
            "an oversize request",
            "wide.xlsx",
            json!([
                fails("get_range_values", json!({"sheet_name": "S", "start_row": 1, "start_col": 1, "end_row": -1, "end_col": -1})),
                {"action": "get_range_values", "parameters": {"sheet_name": "S", "start_row": 1, "start_col": 1, "end_row": 2, "end_col": 2}},
                // The most one call may take: 100,000 cells.
                {"action": "get_range_values", "parameters": {"sheet_name": "S", "start_row": 1, "start_col": 1, "end_row": 1000, "end_col": 100}},
                {"action": "execute_command", "parameters": {"command": "ln -s /tmp out"}},
                fails("save_as", json!({"file_dir": "out", "file_name": "leaked", "file_ext": ".csv"})),
                {"action": "save_as", "parameters": {"file_dir": "kept", "file_name": "copy", "file_ext": ".csv"}}
            ]),
        ),
    );
    let run = p.start(&["run", "tasks", "--progress", "lines"]);
    let pid = run.pid();
    let alive = move || {
        std::fs::metadata(format!("/proc/{pid}")).is_ok()
            && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .unwrap_or_default()
                .contains(") Z ")
    };
    let (peak_kib, limit) = watch_office(p.path(), alive);
    let out = run.wait_within(std::time::Duration::from_secs(300));
    eprintln!(
        "LibreOffice's peak resident memory: {} MiB; its memory limit (RLIMIT_DATA): {limit:?}",
        peak_kib / 1024
    );
    assert_eq!(
        out.status("wide")["status"],
        "passed",
        "{:?}\n{}",
        answers(&out, "wide"),
        out.stderr
    );
    let said = answers(&out, "wide");
    assert!(
        said[0].2.contains(
            "holds 1073741824 cells (1048576 rows × 1024 columns); a call may take at most 100000"
        ),
        "{said:?}"
    );
    assert_eq!(said[1].1, "success", "{said:?}");
    assert_eq!(said[2].1, "success", "{:?}", &said[2].1);
    assert!(
        said[4].2.contains("is outside the task's workspace"),
        "{said:?}"
    );
    assert!(
        !Path::new("/tmp/leaked.csv").exists(),
        "saved through the link"
    );
    assert!(
        out.run_dir("proj")
            .join("wide/workspace/kept/copy.csv")
            .is_file()
    );
    assert_eq!(
        limit.as_deref(),
        Some("4294967296"),
        "the app's memory limit"
    );
    assert!(peak_kib < 4 << 20, "LibreOffice held {peak_kib} KiB");
}

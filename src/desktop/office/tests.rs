//! Tests of the API tools: each app's tools, and the bounds of the arguments that size
//! a call's work.

use super::*;

#[test]
fn each_app_has_ufos_tools_and_only_they_are_offered() {
    assert_eq!(office_tools().len(), 11);
    let word: Vec<String> = tools_for(Known::Word)
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(word, WORD);
    let save = tools_for(Known::Excel)
        .into_iter()
        .find(|t| t.name == "save_as")
        .unwrap();
    assert!(save.params.iter().all(|p| p.name != "current_slide_only"));
    assert!(tools_for(Known::Notepad).is_empty());
    assert_eq!(tools_of("powerpoint").len(), 2);
    assert!(tools_of("notepad").is_empty());
    assert_eq!(refused_on("insert_table", Some(Known::Word)), None);
    assert_eq!(
        refused_on("insert_table", Some(Known::Excel)).unwrap(),
        "`insert_table` is an API tool of Word (LibreOffice Writer), and this task's app is Excel (LibreOffice Calc)"
    );
    assert!(
        refused_on("save_as", None)
            .unwrap()
            .contains("Word (LibreOffice Writer) and Excel")
    );
    assert_eq!(
        result(json!("Table 1 is selected.")),
        json!({"text": "Table 1 is selected."})
    );
    assert_eq!(
        result(json!([["a", 1.0]])),
        json!({"text": "[[\"a\",1.0]]", "values": [["a", 1.0]]})
    );
}

#[test]
fn arguments_that_size_work_are_bounded_before_any_call() {
    let spec = |name: &str| office_tools().iter().find(|t| t.name == name).unwrap();
    let check = |name: &str, args: Value| {
        spec(name)
            .check_arguments(args.as_object().unwrap())
            .map_err(|e| e.to_string())
    };
    // The attack: every row of the sheet by 200 columns.
    let e = check(
        "get_range_values",
        json!({"sheet_name": "Budget", "start_row": 1, "start_col": 1, "end_row": 1_048_576, "end_col": 200}),
    )
    .unwrap_err();
    assert!(
        e.contains("the range holds 209715200 cells; a call may take at most 100000"),
        "{e}"
    );
    // Its variants: past the sheet, a table too large, a text too long, a save that
    // names a folder in its file name or extension.
    for (tool, args, said) in [
        (
            "get_range_values",
            json!({"sheet_name": "S", "start_row": 1, "start_col": 1, "end_row": 2_000_000, "end_col": 1}),
            "is not from -1 to 1048576",
        ),
        (
            "select_table_range",
            json!({"sheet_name": "S", "start_row": 0, "start_col": 1, "end_row": 1, "end_col": 1}),
            "is not from 1 to 1048576",
        ),
        (
            "insert_table",
            json!({"rows": 1000, "columns": 1000}),
            "the table would have 1000000 cells",
        ),
        (
            "insert_excel_table",
            json!({"sheet_name": "S", "start_row": 1, "start_col": 1, "table": vec![vec![1; 1000]; 101]}),
            "the table has 101000 cells",
        ),
        (
            "select_text",
            json!({"text": "x".repeat(10_001)}),
            "it is 10001 characters long",
        ),
        (
            "set_font",
            json!({"font_size": 100_000}),
            "is not from 1 to 999",
        ),
        (
            "save_as",
            json!({"file_name": "../../outside"}),
            "is not a file name",
        ),
        (
            "save_as",
            json!({"file_ext": "/../../etc/x"}),
            "is not a file name",
        ),
        ("save_as", json!({"file_name": ".."}), "is not a file name"),
    ] {
        let e = check(tool, args).unwrap_err();
        assert!(e.contains(said), "{tool}: {e}");
        assert!(e.len() < 300, "{tool}: the error is short: {e}");
    }
    // Within the bounds, and -1 ends (the app's to find, and its helper checks them).
    for (tool, args) in [
        (
            "get_range_values",
            json!({"sheet_name": "S", "start_row": 1, "start_col": 1, "end_row": -1, "end_col": -1}),
        ),
        (
            "get_range_values",
            json!({"sheet_name": "S", "start_row": 1, "start_col": 1, "end_row": 1000, "end_col": 100}),
        ),
        (
            "select_table_range",
            json!({"sheet_name": "S", "start_row": 1, "start_col": 1, "end_row": -1, "end_col": -1}),
        ),
        (
            "save_as",
            json!({"file_dir": "out", "file_name": "report", "file_ext": ".pdf"}),
        ),
    ] {
        assert_eq!(check(tool, args.clone()), Ok(()), "{tool} {args}");
    }
    // The helper checks the ranges the office finds against the same bound.
    let helper = include_str!("../linux/uno_helper.py");
    assert!(helper.contains(&format!("MAX_CELLS = {}", "100_000")));
    assert_eq!(MAX_CELLS, 100_000);
}

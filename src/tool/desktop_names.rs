//! The names of the desktop's tools: UFO's app tools (`desktop::tools`), the Office
//! API tools (`desktop::office`) and the computer-use tools (`desktop::computer`), which
//! specify them. Here, below both, so that what a
//! task is (a desktop task or a shell task) is told without the desktop; a test of
//! `desktop::tools` keeps the lists and the specs the same.

/// UFO's app tools, in the order the desktop specifies them.
pub(crate) const UI_TOOLS: [&str; 20] = [
    "click_input",
    "set_edit_text",
    "keyboard_input",
    "wheel_mouse_input",
    "texts",
    "click_on_coordinates",
    "drag_on_coordinates",
    "wait",
    "summary",
    "select_application",
    "click_element",
    "select_application_window",
    "capture_window_screenshot",
    "capture_desktop_screenshot",
    "get_ui_tree",
    "get_app_window_info",
    "get_desktop_app_info",
    "get_desktop_app_target_info",
    "get_app_window_controls_info",
    "get_app_window_controls_target_info",
];

/// The AppAgent's own UI tools (UFO's AppAgent acts in its window with these; the rest
/// select windows and describe the screen): the first of [`UI_TOOLS`].
pub(crate) const APP_AGENT_TOOLS: &[&str] = UI_TOOLS.split_at(9).0;

/// The Office API tools, in the order the desktop specifies them.
pub(crate) const OFFICE_TOOLS: [&str; 11] = [
    "insert_table",
    "select_text",
    "select_table",
    "select_paragraph",
    "set_font",
    "save_as",
    "insert_excel_table",
    "select_table_range",
    "reorder_columns",
    "get_range_values",
    "set_background_color",
];

/// The computer-use tools (an operator's actions, `desktop::computer`), in the order
/// the desktop specifies them: UFO's operator commands (`controller.py`) and what
/// today's models also send. The operator's wait is UFO's `wait`.
pub(crate) const COMPUTER_TOOLS: [&str; 14] = [
    "click",
    "double_click",
    "triple_click",
    "move",
    "drag",
    "scroll",
    "mouse_down",
    "mouse_up",
    "keypress",
    "hold_key",
    "type",
    "screenshot",
    "zoom",
    "cursor_position",
];

/// Whether `tool` is one of the desktop's: a UI tool, an app's API tool, or a
/// computer-use tool.
pub(crate) fn is_desktop_tool(tool: &str) -> bool {
    UI_TOOLS.contains(&tool) || OFFICE_TOOLS.contains(&tool) || COMPUTER_TOOLS.contains(&tool)
}

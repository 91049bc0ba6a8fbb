//! A control as every platform describes it: UI Automation's control types (the names
//! UFO and its recorded plans use), AT-SPI's roles mapped onto them, a label (`id`) per
//! control of a snapshot, and its place on the screen.

use std::fmt;

use serde::{Deserialize, Serialize};

/// UI Automation's control types, by the names UFO uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) enum ControlType {
    AppBar,
    Button,
    Calendar,
    CheckBox,
    ComboBox,
    Custom,
    DataGrid,
    DataItem,
    Document,
    Edit,
    Group,
    Header,
    HeaderItem,
    Hyperlink,
    Image,
    List,
    ListItem,
    Menu,
    MenuBar,
    MenuItem,
    Pane,
    ProgressBar,
    RadioButton,
    ScrollBar,
    Separator,
    Slider,
    Spinner,
    SplitButton,
    StatusBar,
    Tab,
    TabItem,
    Table,
    Text,
    Thumb,
    TitleBar,
    ToolBar,
    ToolTip,
    Tree,
    TreeItem,
    Window,
}

/// Every control type, for parsing and for messages.
const ALL: [ControlType; 40] = {
    use ControlType::*;
    [
        AppBar,
        Button,
        Calendar,
        CheckBox,
        ComboBox,
        Custom,
        DataGrid,
        DataItem,
        Document,
        Edit,
        Group,
        Header,
        HeaderItem,
        Hyperlink,
        Image,
        List,
        ListItem,
        Menu,
        MenuBar,
        MenuItem,
        Pane,
        ProgressBar,
        RadioButton,
        ScrollBar,
        Separator,
        Slider,
        Spinner,
        SplitButton,
        StatusBar,
        Tab,
        TabItem,
        Table,
        Text,
        Thumb,
        TitleBar,
        ToolBar,
        ToolTip,
        Tree,
        TreeItem,
        Window,
    ]
};

impl fmt::Display for ControlType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

impl ControlType {
    /// A control type by its UI Automation name, any case, with or without the
    /// `Control` suffix pywinauto prints (`ButtonControl`).
    pub(crate) fn parse(name: &str) -> Option<Self> {
        let name = name.trim();
        let name = name.strip_suffix("Control").unwrap_or(name);
        ALL.into_iter()
            .find(|t| t.to_string().eq_ignore_ascii_case(name))
    }

    /// The control type of an AT-SPI role (its role name, as `GetRoleName` gives it).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) fn from_atspi_role(role: &str) -> Self {
        use ControlType::*;
        match role {
            "push button" | "button" => Button,
            "toggle button" => Button,
            "push button menu" => SplitButton,
            "check box" => CheckBox,
            "radio button" => RadioButton,
            "combo box" => ComboBox,
            "text" | "entry" | "password text" => Edit,
            "spin button" => Spinner,
            "paragraph" | "heading" | "section" | "block quote" => Edit,
            "document frame"
            | "document text"
            | "document spreadsheet"
            | "document presentation"
            | "document web"
            | "document email" => Document,
            "menu item" | "check menu item" | "radio menu item" | "tearoff menu item" => MenuItem,
            "menu" => MenuItem,
            "menu bar" => MenuBar,
            "tool bar" => ToolBar,
            "status bar" => StatusBar,
            "page tab" => TabItem,
            "page tab list" => Tab,
            "list" | "list box" => List,
            "list item" => ListItem,
            "table" | "tree table" => Table,
            "table cell" => DataItem,
            "table column header" | "table row header" | "column header" | "row header" => {
                HeaderItem
            }
            "tree" => Tree,
            "tree item" => TreeItem,
            "scroll bar" => ScrollBar,
            "slider" => Slider,
            "progress bar" => ProgressBar,
            "separator" => Separator,
            "label" | "static" | "caption" | "description value" => Text,
            "link" => Hyperlink,
            "image" | "icon" | "canvas" => Image,
            "tool tip" => ToolTip,
            "header" | "footer" => Header,
            "frame" | "window" | "dialog" | "alert" | "file chooser" | "color chooser" => Window,
            "panel" | "filler" | "scroll pane" | "viewport" | "split pane" | "layered pane"
            | "root pane" | "glass pane" | "internal frame" | "option pane" | "desktop frame" => {
                Pane
            }
            "grouping" | "form" | "landmark" => Group,
            "title bar" => TitleBar,
            _ => Custom,
        }
    }
}

/// The control types a control list holds (UFO's CONTROL_LIST, and the few more that
/// GTK, LibreOffice and Office use for the same things).
pub(crate) const LISTED: &[ControlType] = &[
    ControlType::Button,
    ControlType::Edit,
    ControlType::TabItem,
    ControlType::Document,
    ControlType::ListItem,
    ControlType::MenuItem,
    ControlType::ScrollBar,
    ControlType::TreeItem,
    ControlType::Hyperlink,
    ControlType::ComboBox,
    ControlType::RadioButton,
    ControlType::DataItem,
    ControlType::CheckBox,
    ControlType::Spinner,
    ControlType::SplitButton,
];

/// A rectangle on the screen, in pixels.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Rect {
    /// Left edge.
    pub(crate) x: i32,
    /// Top edge.
    pub(crate) y: i32,
    /// Width.
    pub(crate) width: i32,
    /// Height.
    pub(crate) height: i32,
}

impl Rect {
    /// The centre point (apps report off-screen controls at the ends of the integer
    /// range: nothing here may overflow).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) fn center(&self) -> (i32, i32) {
        let mid = |a: i32, len: i32| (i64::from(a) + i64::from(len) / 2) as i32;
        (mid(self.x, self.width), mid(self.y, self.height))
    }

    /// The right edge.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) fn right(&self) -> i32 {
        self.x.saturating_add(self.width)
    }

    /// The bottom edge.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) fn bottom(&self) -> i32 {
        self.y.saturating_add(self.height)
    }

    /// Whether it has an area and `at` is in it.
    pub(crate) fn contains(&self, at: (i32, i32)) -> bool {
        self.is_visible()
            && at.0 >= self.x
            && at.1 >= self.y
            && at.0 < self.right()
            && at.1 < self.bottom()
    }

    /// Whether it has an area, somewhere a screen could show it.
    pub(crate) fn is_visible(&self) -> bool {
        const FAR: i32 = 1 << 20;
        self.width > 0
            && self.height > 0
            && self.x > -FAR
            && self.y > -FAR
            && self.x < FAR
            && self.y < FAR
    }
}

/// One control of a snapshot of an app's window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Control {
    /// Its label in this snapshot (`"1"`, `"2"`, ...), as the control list and the
    /// annotated screenshot show it.
    pub(crate) id: String,
    /// Its name (UI Automation's Name, AT-SPI's accessible name).
    pub(crate) name: String,
    /// Its control type.
    pub(crate) control_type: ControlType,
    /// Where it is.
    pub(crate) rect: Rect,
    /// Whether it takes text (`set_edit_text` works on it).
    pub(crate) editable: bool,
    /// Whether it is enabled.
    pub(crate) enabled: bool,
    /// The backend's own handle for it (which node of its snapshot).
    #[serde(skip)]
    pub(crate) handle: usize,
}

impl fmt::Display for Control {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] {} {:?}", self.id, self.control_type, self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rectangles_at_the_ends_of_the_range_do_not_overflow() {
        // LibreOffice reports closed menus' items at (i32::MIN, i32::MIN) and others far out.
        for rect in [
            Rect {
                x: i32::MIN,
                y: i32::MIN,
                width: 1,
                height: 1,
            },
            Rect {
                x: i32::MAX,
                y: i32::MAX,
                width: i32::MAX,
                height: i32::MAX,
            },
        ] {
            let _ = (rect.center(), rect.right(), rect.bottom());
            assert!(!rect.is_visible(), "{rect:?}");
        }
        let rect = Rect {
            x: 10,
            y: 20,
            width: 100,
            height: 50,
        };
        assert_eq!(
            (rect.center(), rect.right(), rect.bottom()),
            ((60, 45), 110, 70)
        );
        assert!(rect.is_visible());
    }

    #[test]
    fn control_types_parse_by_uia_name() {
        assert_eq!(ControlType::parse("Edit"), Some(ControlType::Edit));
        assert_eq!(ControlType::parse("menuitem"), Some(ControlType::MenuItem));
        assert_eq!(
            ControlType::parse("ButtonControl"),
            Some(ControlType::Button)
        );
        assert_eq!(ControlType::parse("Widget"), None);
        for t in ALL {
            assert_eq!(ControlType::parse(&t.to_string()), Some(t));
        }
    }

    #[test]
    fn atspi_roles_map_onto_uia_types() {
        use ControlType::*;
        for (role, t) in [
            ("push button", Button),
            ("menu item", MenuItem),
            ("check menu item", MenuItem),
            ("check box", CheckBox),
            ("text", Edit),
            ("spin button", Spinner),
            ("paragraph", Edit),
            ("document text", Document),
            ("document spreadsheet", Document),
            ("page tab", TabItem),
            ("list item", ListItem),
            ("table cell", DataItem),
            ("frame", Window),
            ("filler", Pane),
            ("something new", Custom),
        ] {
            assert_eq!(ControlType::from_atspi_role(role), t, "{role}");
        }
    }
}

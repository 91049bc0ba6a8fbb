//! The app's accessibility tree over AT-SPI, from the runner's side: a walk of the
//! app's showing windows (role, name, states, place of every node), the control list
//! made from it, and the actions AT-SPI offers on one node (its named actions, its
//! text, its editable text, the keyboard focus). Every call goes to the desktop's own
//! accessibility bus, opened from its address: never the runner's session bus.

use std::collections::VecDeque;

use atspi::proxy::accessible::AccessibleProxy;
use atspi::proxy::action::ActionProxy;
use atspi::proxy::component::ComponentProxy;
use atspi::proxy::editable_text::EditableTextProxy;
use atspi::proxy::text::TextProxy;
use atspi::{CoordType, Interface, InterfaceSet, State, StateSet};
use serde_json::{Value, json};
use zbus::Connection;
use zbus::proxy::CacheProperties;

use crate::desktop::backend::{Snapshot, Window};
use crate::desktop::control::{Control, ControlType, LISTED, Rect};

/// The registry: its root's children are the applications.
const REGISTRY: &str = "org.a11y.atspi.Registry";
/// Every application's root object.
const ROOT: &str = "/org/a11y/atspi/accessible/root";
/// How many nodes are asked about at once.
const CONCURRENT: usize = 32;
/// The most nodes a walk visits (LibreOffice's Writer shows about 900).
const MAX_NODES: usize = 5000;
/// A node with more children than this is not walked into (Calc's grid reports two
/// billion cells; asking for them all would exhaust the app).
const MAX_CHILDREN: i32 = 500;
/// The most characters `texts` reads of one control, and in all (an app holds what a
/// task typed, however much).
const MAX_TEXT: i32 = 1 << 20;
/// An object on the bus: the app's bus name and the object's path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ObjectId {
    /// The app's unique bus name.
    pub(crate) bus: String,
    /// The object path.
    pub(crate) path: String,
}

/// One node of a walk.
#[derive(Clone, Debug)]
pub(crate) struct Node {
    /// Where it lives.
    pub(crate) id: ObjectId,
    /// AT-SPI's role name (`push button`).
    pub(crate) role: String,
    /// Its accessible name.
    pub(crate) name: String,
    /// Its states.
    pub(crate) states: StateSet,
    /// Its interfaces.
    pub(crate) interfaces: InterfaceSet,
    /// Its place on the screen (empty without a Component).
    pub(crate) rect: Rect,
    /// Its children's indices in the walk.
    pub(crate) children: Vec<usize>,
    /// How deep it is (the windows are at 0).
    pub(crate) depth: usize,
}

impl Node {
    fn control_type(&self) -> ControlType {
        ControlType::from_atspi_role(&self.role)
    }

    fn showing(&self) -> bool {
        self.states.contains(State::Showing)
    }
}

fn bus_error(what: &str, e: impl std::fmt::Display) -> String {
    format!("the accessibility bus failed ({what}): {e}")
}

async fn accessible<'a>(
    conn: &'a Connection,
    id: &ObjectId,
) -> Result<AccessibleProxy<'a>, String> {
    AccessibleProxy::builder(conn)
        .destination(id.bus.clone())
        .and_then(|b| b.path(id.path.clone()))
        .map_err(|e| bus_error("an object's address", e))?
        .cache_properties(CacheProperties::No)
        .build()
        .await
        .map_err(|e| bus_error("an object", e))
}

macro_rules! interface_proxy {
    ($fn:ident, $proxy:ident) => {
        async fn $fn<'a>(conn: &'a Connection, id: &ObjectId) -> Result<$proxy<'a>, String> {
            $proxy::builder(conn)
                .destination(id.bus.clone())
                .and_then(|b| b.path(id.path.clone()))
                .map_err(|e| bus_error("an object's address", e))?
                .cache_properties(CacheProperties::No)
                .build()
                .await
                .map_err(|e| bus_error("an object", e))
        }
    };
}
interface_proxy!(component, ComponentProxy);
interface_proxy!(action, ActionProxy);
interface_proxy!(text, TextProxy);
interface_proxy!(editable, EditableTextProxy);

/// An application on the bus and its windows that show.
pub(crate) struct Application {
    /// Its root.
    pub(crate) id: ObjectId,
    /// Its name.
    pub(crate) name: String,
    /// Its showing windows.
    pub(crate) windows: Vec<ObjectId>,
    /// Their titles and places, in the same order.
    pub(crate) titles: Vec<(String, Rect)>,
}

/// The applications on the bus.
pub(crate) async fn applications(conn: &Connection) -> Result<Vec<Application>, String> {
    let registry = ObjectId {
        bus: REGISTRY.to_string(),
        path: ROOT.to_string(),
    };
    let root = accessible(conn, &registry).await?;
    let apps = root
        .get_children()
        .await
        .map_err(|e| bus_error("the applications", e))?;
    let mut out = Vec::new();
    for app in apps {
        let Some(bus) = app.name_as_str() else {
            continue;
        };
        let id = ObjectId {
            bus: bus.to_string(),
            path: app.path_as_str().to_string(),
        };
        let Ok(proxy) = accessible(conn, &id).await else {
            continue;
        };
        let name = proxy.name().await.unwrap_or_default();
        let mut windows = Vec::new();
        let mut titles = Vec::new();
        for window in proxy.get_children().await.unwrap_or_default() {
            let Some(bus) = window.name_as_str() else {
                continue;
            };
            let wid = ObjectId {
                bus: bus.to_string(),
                path: window.path_as_str().to_string(),
            };
            if let Ok(w) = accessible(conn, &wid).await
                && w.get_state()
                    .await
                    .is_ok_and(|s| s.contains(State::Showing))
            {
                let title = w.name().await.unwrap_or_default();
                let mut rect = Rect::default();
                if let Ok(c) = component(conn, &wid).await
                    && let Ok((x, y, width, height)) = c.get_extents(CoordType::Screen).await
                {
                    rect = Rect {
                        x,
                        y,
                        width,
                        height,
                    };
                }
                titles.push((title.trim_end().to_string(), rect));
                windows.push(wid);
            }
        }
        out.push(Application {
            id,
            name,
            windows,
            titles,
        });
    }
    Ok(out)
}

/// What one node says of itself; `None` for a node that does not show (a closed
/// menu's items, a hidden panel): its state is all that is asked of it, which keeps
/// the walk of an office suite's hundreds of menu items cheap.
async fn describe(
    conn: Connection,
    id: ObjectId,
    depth: usize,
) -> Result<Option<(Node, Vec<ObjectId>)>, String> {
    let proxy = accessible(&conn, &id).await?;
    let states = proxy
        .get_state()
        .await
        .map_err(|e| bus_error("a state", e))?;
    if !states.contains(State::Showing) {
        return Ok(None);
    }
    let (role, name, interfaces, count) = tokio::try_join!(
        async { proxy.get_role().await.map_err(|e| bus_error("a role", e)) },
        async { proxy.name().await.map_err(|e| bus_error("a name", e)) },
        async {
            proxy
                .get_interfaces()
                .await
                .map_err(|e| bus_error("interfaces", e))
        },
        async {
            proxy
                .child_count()
                .await
                .map_err(|e| bus_error("a child count", e))
        },
    )?;
    let mut rect = Rect::default();
    if interfaces.contains(Interface::Component)
        && let Ok(c) = component(&conn, &id).await
        && let Ok((x, y, width, height)) = c.get_extents(CoordType::Screen).await
    {
        rect = Rect {
            x,
            y,
            width,
            height,
        };
    }
    // A node that manages its descendants (a document view) is walked only when it has
    // few: Calc's grid reports two billion cells.
    let walk_into = (1..=MAX_CHILDREN).contains(&count);
    let mut children = Vec::new();
    if walk_into {
        for child in proxy
            .get_children()
            .await
            .map_err(|e| bus_error("children", e))?
        {
            if let Some(bus) = child.name_as_str() {
                children.push(ObjectId {
                    bus: bus.to_string(),
                    path: child.path_as_str().to_string(),
                });
            }
        }
    }
    let node = Node {
        id,
        role: role.name().to_string(),
        name: name.trim_end().to_string(),
        states,
        interfaces,
        rect,
        children: Vec::new(),
        depth,
    };
    Ok(Some((node, children)))
}

/// Walks the app's showing windows, breadth first, one level's nodes at once.
pub(crate) async fn walk(conn: &Connection, app: &ObjectId) -> Result<Vec<Node>, String> {
    let root = accessible(conn, app).await?;
    let windows = root
        .get_children()
        .await
        .map_err(|e| bus_error("the app's windows", e))?;
    let mut nodes: Vec<Node> = Vec::new();
    let mut level: VecDeque<(Option<usize>, ObjectId)> = windows
        .into_iter()
        .filter_map(|w| {
            Some((
                None,
                ObjectId {
                    bus: w.name_as_str()?.to_string(),
                    path: w.path_as_str().to_string(),
                },
            ))
        })
        .collect();
    let mut depth = 0;
    while !level.is_empty() && nodes.len() < MAX_NODES {
        // At most MAX_NODES in all, and a bounded number of calls in flight at once.
        level.truncate(MAX_NODES - nodes.len());
        let slots = std::sync::Arc::new(tokio::sync::Semaphore::new(CONCURRENT));
        let mut set = tokio::task::JoinSet::new();
        for (i, (parent, id)) in level.drain(..).enumerate() {
            let conn = conn.clone();
            let slots = std::sync::Arc::clone(&slots);
            set.spawn(async move {
                let _slot = slots.acquire_owned().await;
                (i, parent, describe(conn, id, depth).await)
            });
        }
        let mut found = Vec::new();
        while let Some(joined) = set.join_next().await {
            let (i, parent, described) =
                joined.map_err(|e| format!("a tree walk task failed: {e}"))?;
            // A node that went away while being walked, or does not show, is left out.
            if let Ok(Some(d)) = described {
                found.push((i, parent, d));
            }
        }
        found.sort_by_key(|(i, _, _)| *i);
        for (_, parent, (node, children)) in found {
            let index = nodes.len();
            if let Some(p) = parent {
                nodes[p].children.push(index);
            }
            nodes.push(node);
            level.extend(children.into_iter().map(|c| (Some(index), c)));
            if nodes.len() >= MAX_NODES {
                break;
            }
        }
        depth += 1;
    }
    Ok(nodes)
}

/// The control list of a walk (labelled in depth-first order, dialogs' controls
/// included), the main window (the `selected` one, if it shows), and the tree.
pub(crate) fn snapshot(nodes: &[Node], application: &str, selected: Option<&ObjectId>) -> Snapshot {
    let mut controls = Vec::new();
    let mut order = Vec::new();
    let mut roots: Vec<usize> = (0..nodes.len()).filter(|&i| nodes[i].depth == 0).collect();
    // The selected window first (stable otherwise).
    roots.sort_by_key(|&i| Some(&nodes[i].id) != selected);
    let mut stack: Vec<usize> = roots.iter().rev().copied().collect();
    while let Some(i) = stack.pop() {
        order.push(i);
        stack.extend(nodes[i].children.iter().rev());
    }
    for i in order {
        let node = &nodes[i];
        let control_type = node.control_type();
        if !node.showing() || !node.rect.is_visible() || !LISTED.contains(&control_type) {
            continue;
        }
        controls.push(Control {
            id: (controls.len() + 1).to_string(),
            name: node.name.clone(),
            control_type,
            rect: node.rect,
            editable: node.interfaces.contains(Interface::EditableText)
                && node.states.contains(State::Editable),
            enabled: node.states.contains(State::Enabled),
            handle: i,
        });
    }
    let window = roots.first().map(|&i| Window {
        name: nodes[i].name.clone(),
        rect: nodes[i].rect,
        application: application.to_string(),
    });
    let tree = Value::Array(roots.iter().map(|&i| tree(nodes, i)).collect());
    Snapshot {
        window,
        controls,
        tree,
        nodes: nodes.len(),
    }
}

/// One node and its subtree as JSON, UFO's UI tree shape.
fn tree(nodes: &[Node], i: usize) -> Value {
    let n = &nodes[i];
    json!({
        "name": n.name,
        "control_type": n.control_type().to_string(),
        "role": n.role,
        "rectangle": {"left": n.rect.x, "top": n.rect.y, "right": n.rect.right(), "bottom": n.rect.bottom()},
        "enabled": n.states.contains(State::Enabled),
        "focused": n.states.contains(State::Focused),
        "children": n.children.iter().map(|&c| tree(nodes, c)).collect::<Vec<_>>(),
    })
}

/// The node that has the keyboard focus, as the walk saw it: the last one showing
/// that reports it (an app may leave the state on a node it left behind a dialog).
pub(crate) fn focused(nodes: &[Node]) -> Option<&Node> {
    nodes
        .iter()
        .rev()
        .find(|n| n.states.contains(State::Focused) && n.showing() && n.rect.is_visible())
}

/// Names of actions that are a click.
const CLICK_ACTIONS: &[&str] = &["click", "press", "activate", "jump", "toggle", "open"];

/// Does the node's click-like accessibility action; false when it has none.
pub(crate) async fn do_click(conn: &Connection, node: &Node) -> Result<bool, String> {
    if !node.interfaces.contains(Interface::Action) {
        return Ok(false);
    }
    let proxy = action(conn, &node.id).await?;
    let actions = proxy
        .get_actions()
        .await
        .map_err(|e| bus_error("the actions", e))?;
    let Some(index) = actions
        .iter()
        .position(|a| CLICK_ACTIONS.contains(&a.name.to_ascii_lowercase().as_str()))
    else {
        return Ok(false);
    };
    proxy
        .do_action(index as i32)
        .await
        .map_err(|e| bus_error("an action", e))
}

/// Replaces the node's text; false when it takes no text.
pub(crate) async fn set_text(conn: &Connection, node: &Node, text: &str) -> Result<bool, String> {
    if !node.interfaces.contains(Interface::EditableText) {
        return Ok(false);
    }
    let proxy = editable(conn, &node.id).await?;
    proxy
        .set_text_contents(text)
        .await
        .map_err(|e| bus_error("setting text", e))
}

/// Gives the node the keyboard focus.
pub(crate) async fn grab_focus(conn: &Connection, node: &Node) -> Result<bool, String> {
    if !node.interfaces.contains(Interface::Component) {
        return Ok(false);
    }
    // A control that has the focus keeps it: asking again is not free (LibreOffice's
    // sheet moves its cell cursor back to A1 when it is given the focus, a while after
    // the call returns, under the keys typed next).
    if has_focus(conn, node).await {
        return Ok(true);
    }
    let granted = component(conn, &node.id)
        .await?
        .grab_focus()
        .await
        .map_err(|e| bus_error("the focus", e))?;
    if granted {
        // The app takes the focus when it gets to it: wait for it (a moment at most),
        // so that the keys typed next reach the control.
        let deadline = std::time::Instant::now() + FOCUS_WAIT;
        while !has_focus(conn, node).await && std::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        tokio::time::sleep(FOCUS_SETTLE).await;
    }
    Ok(granted)
}

/// How long a control given the focus may take to report it.
const FOCUS_WAIT: std::time::Duration = std::time::Duration::from_secs(2);
/// How long an app is given to finish taking the focus once it reports it.
const FOCUS_SETTLE: std::time::Duration = std::time::Duration::from_millis(150);

/// Whether the node reports the keyboard focus now.
async fn has_focus(conn: &Connection, node: &Node) -> bool {
    match accessible(conn, &node.id).await {
        Ok(proxy) => proxy
            .get_state()
            .await
            .is_ok_and(|s| s.contains(State::Focused)),
        Err(_) => false,
    }
}

/// The text a node shows: its Text, or its descendants' texts a line each (a
/// document's paragraphs), or its name.
pub(crate) async fn texts(conn: &Connection, node: &Node) -> Result<String, String> {
    if let Some(t) = own_text(conn, &node.id, node.interfaces).await? {
        return Ok(t);
    }
    let mut lines = Vec::new();
    let mut queue: VecDeque<ObjectId> = VecDeque::from([node.id.clone()]);
    let mut visited = 0;
    let mut chars = 0;
    while let Some(id) = queue.pop_front() {
        visited += 1;
        if visited > MAX_NODES || chars >= MAX_TEXT as usize {
            break;
        }
        let proxy = accessible(conn, &id).await?;
        if id != node.id {
            let interfaces = proxy
                .get_interfaces()
                .await
                .map_err(|e| bus_error("interfaces", e))?;
            if let Some(t) = own_text(conn, &id, interfaces).await? {
                chars += t.chars().count();
                lines.push(t);
                continue;
            }
        }
        let states = proxy
            .get_state()
            .await
            .map_err(|e| bus_error("a state", e))?;
        let count = proxy
            .child_count()
            .await
            .map_err(|e| bus_error("a child count", e))?;
        if !states.contains(State::Showing) || !(1..=MAX_CHILDREN).contains(&count) {
            continue;
        }
        for child in proxy
            .get_children()
            .await
            .map_err(|e| bus_error("children", e))?
        {
            if let Some(bus) = child.name_as_str() {
                queue.push_back(ObjectId {
                    bus: bus.to_string(),
                    path: child.path_as_str().to_string(),
                });
            }
        }
    }
    if lines.is_empty() {
        return Ok(node.name.clone());
    }
    Ok(lines.join("\n"))
}

async fn own_text(
    conn: &Connection,
    id: &ObjectId,
    interfaces: InterfaceSet,
) -> Result<Option<String>, String> {
    if !interfaces.contains(Interface::Text) {
        return Ok(None);
    }
    let proxy = text(conn, id).await?;
    let count = proxy
        .character_count()
        .await
        .map_err(|e| bus_error("a text's length", e))?;
    proxy
        .get_text(0, count.min(MAX_TEXT))
        .await
        .map(Some)
        .map_err(|e| bus_error("a text", e))
}

//! The actions AT-SPI offers on one node of a walk: its click-like named action, its
//! editable text, the keyboard focus, and the text it shows (its own, or its
//! descendants' a line each).

use std::collections::VecDeque;

use atspi::{Interface, InterfaceSet, State};
use zbus::Connection;

use super::{BusError, MAX_CHILDREN, MAX_NODES, Node, ObjectId};
use super::{accessible, action, component, editable, failed, text};

/// The most characters `texts` reads of one control, and in all (an app holds what a
/// task typed, however much).
const MAX_TEXT: i32 = 1 << 20;

/// Names of actions that are a click.
const CLICK_ACTIONS: &[&str] = &["click", "press", "activate", "jump", "toggle", "open"];

/// Does the node's click-like accessibility action; false when it has none.
pub(crate) async fn do_click(conn: &Connection, node: &Node) -> Result<bool, BusError> {
    if !node.interfaces.contains(Interface::Action) {
        return Ok(false);
    }
    let proxy = action(conn, &node.id).await?;
    let actions = proxy.get_actions().await.map_err(failed("the actions"))?;
    let Some(index) = actions
        .iter()
        .position(|a| CLICK_ACTIONS.contains(&a.name.to_ascii_lowercase().as_str()))
    else {
        return Ok(false);
    };
    proxy
        .do_action(index as i32)
        .await
        .map_err(failed("an action"))
}

/// Replaces the node's text; false when it takes no text.
pub(crate) async fn set_text(conn: &Connection, node: &Node, text: &str) -> Result<bool, BusError> {
    if !node.interfaces.contains(Interface::EditableText) {
        return Ok(false);
    }
    let proxy = editable(conn, &node.id).await?;
    proxy
        .set_text_contents(text)
        .await
        .map_err(failed("setting text"))
}

/// Gives the node the keyboard focus.
pub(crate) async fn grab_focus(conn: &Connection, node: &Node) -> Result<bool, BusError> {
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
        .map_err(failed("the focus"))?;
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
pub(crate) async fn texts(conn: &Connection, node: &Node) -> Result<String, BusError> {
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
            let interfaces = proxy.get_interfaces().await.map_err(failed("interfaces"))?;
            if let Some(t) = own_text(conn, &id, interfaces).await? {
                chars += t.chars().count();
                lines.push(t);
                continue;
            }
        }
        let states = proxy.get_state().await.map_err(failed("a state"))?;
        let count = proxy.child_count().await.map_err(failed("a child count"))?;
        if !states.contains(State::Showing) || !(1..=MAX_CHILDREN).contains(&count) {
            continue;
        }
        for child in proxy.get_children().await.map_err(failed("children"))? {
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
) -> Result<Option<String>, BusError> {
    if !interfaces.contains(Interface::Text) {
        return Ok(None);
    }
    let proxy = text(conn, id).await?;
    let count = proxy
        .character_count()
        .await
        .map_err(failed("a text's length"))?;
    proxy
        .get_text(0, count.min(MAX_TEXT))
        .await
        .map(Some)
        .map_err(failed("a text"))
}

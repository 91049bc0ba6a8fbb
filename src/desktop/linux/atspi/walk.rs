//! The walk of the app's showing windows over AT-SPI, breadth first and many nodes at
//! once: the applications on the bus and their windows, what each node says of itself,
//! the control list made from a walk (labelled in tree order), its UI tree, and the
//! node that has the keyboard focus.

use std::collections::VecDeque;

use atspi::{CoordType, Interface, State};
use serde_json::{Value, json};
use zbus::Connection;

use super::{BusError, MAX_CHILDREN, MAX_NODES, Node, ObjectId, accessible, component, failed};
use crate::desktop::backend::{Snapshot, Window};
use crate::desktop::control::{Control, LISTED, Rect};

/// The registry: its root's children are the applications.
const REGISTRY: &str = "org.a11y.atspi.Registry";
/// Every application's root object.
const ROOT: &str = "/org/a11y/atspi/accessible/root";
/// How many nodes are asked about at once.
const CONCURRENT: usize = 32;

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
pub(crate) async fn applications(conn: &Connection) -> Result<Vec<Application>, BusError> {
    let registry = ObjectId {
        bus: REGISTRY.to_string(),
        path: ROOT.to_string(),
    };
    let root = accessible(conn, &registry).await?;
    let apps = root
        .get_children()
        .await
        .map_err(failed("the applications"))?;
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
) -> Result<Option<(Node, Vec<ObjectId>)>, BusError> {
    let proxy = accessible(&conn, &id).await?;
    let states = proxy.get_state().await.map_err(failed("a state"))?;
    if !states.contains(State::Showing) {
        return Ok(None);
    }
    let (role, name, interfaces, count) = tokio::try_join!(
        async { proxy.get_role().await.map_err(failed("a role")) },
        async { proxy.name().await.map_err(failed("a name")) },
        async { proxy.get_interfaces().await.map_err(failed("interfaces")) },
        async { proxy.child_count().await.map_err(failed("a child count")) },
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
        for child in proxy.get_children().await.map_err(failed("children"))? {
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
pub(crate) async fn walk(conn: &Connection, app: &ObjectId) -> Result<Vec<Node>, BusError> {
    let root = accessible(conn, app).await?;
    let windows = root
        .get_children()
        .await
        .map_err(failed("the app's windows"))?;
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
            let (i, parent, described) = joined.map_err(BusError::Walk)?;
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

//! The hit test over AT-SPI: the element under a screen point inside a window
//! (`Component.GetAccessibleAtPoint`, level by level down from the window), and the
//! element a recording names found again in a window (down its recorded path, else by
//! its role and name), where it is now.

use std::collections::VecDeque;

use atspi::{CoordType, State};
use zbus::Connection;

use super::{BusError, MAX_CHILDREN, MAX_NODES, ObjectId, accessible, component, failed};
use crate::desktop::control::Rect;
use crate::desktop::element::{Element, MAX_DEPTH, PathStep, pick_child};

/// AT-SPI's reference to no object.
const NULL_PATH: &str = "/org/a11y/atspi/null";

/// An object reference from the bus as an id, `None` for the null object.
fn id_of(r: &atspi::ObjectRefOwned) -> Option<ObjectId> {
    let bus = r.name_as_str()?;
    let path = r.path_as_str();
    (path != NULL_PATH && !bus.is_empty()).then(|| ObjectId {
        bus: bus.to_string(),
        path: path.to_string(),
    })
}

/// How far in front a top-level window is likely to be, with no window manager to say:
/// 2 for a dialog (it opens over its window), 1 for the active one, else 0.
pub(crate) async fn in_front(conn: &Connection, window: &ObjectId) -> u8 {
    let Ok(proxy) = accessible(conn, window).await else {
        return 0;
    };
    let role = proxy
        .get_role()
        .await
        .map(|r| r.name().to_string())
        .unwrap_or_default();
    if [
        "dialog",
        "alert",
        "file chooser",
        "color chooser",
        "font chooser",
    ]
    .contains(&role.as_str())
    {
        return 2;
    }
    let active = proxy
        .get_state()
        .await
        .is_ok_and(|s| s.contains(State::Active));
    u8::from(active)
}

/// A node's role and name.
async fn role_and_name(conn: &Connection, id: &ObjectId) -> Result<(String, String), BusError> {
    let proxy = accessible(conn, id).await?;
    let (role, name) = tokio::try_join!(
        async { proxy.get_role().await.map_err(failed("a role")) },
        async { proxy.name().await.map_err(failed("a name")) },
    )?;
    Ok((role.name().to_string(), name.trim_end().to_string()))
}

/// Where a node is on the screen.
async fn extents(conn: &Connection, id: &ObjectId) -> Result<Rect, BusError> {
    let c = component(conn, id).await?;
    let (x, y, width, height) = c
        .get_extents(CoordType::Screen)
        .await
        .map_err(failed("a place"))?;
    Ok(Rect {
        x,
        y,
        width,
        height,
    })
}

/// The element of `window` (titled `title`) under the screen point `at`: the deepest
/// node the hit test reaches, with the way to it.
pub(crate) async fn element_at(
    conn: &Connection,
    window: &ObjectId,
    title: &str,
    at: (i32, i32),
) -> Result<Option<Element>, BusError> {
    let (role, name) = role_and_name(conn, window).await?;
    let index = accessible(conn, window)
        .await?
        .get_index_in_parent()
        .await
        .unwrap_or(0)
        .max(0) as u32;
    let mut path = vec![PathStep { role, name, index }];
    let mut node = window.clone();
    let mut rect = extents(conn, window).await?;
    // An open menu is no window of its own: its items hang under the menu bar's menu,
    // and the hit test answers for what lies beneath them. Open menus are asked first.
    if let Some(chain) = open_menu_at(conn, window, at).await {
        for child in chain {
            let (role, name) = role_and_name(conn, &child).await?;
            let index = accessible(conn, &child)
                .await?
                .get_index_in_parent()
                .await
                .unwrap_or(0)
                .max(0) as u32;
            if let Ok(r) = extents(conn, &child).await
                && r.is_visible()
            {
                rect = r;
            }
            path.push(PathStep { role, name, index });
            node = child;
        }
    }
    while path.len() < MAX_DEPTH {
        let Ok(c) = component(conn, &node).await else {
            break;
        };
        // A node that answers no child (some containers do not hit-test their
        // children: GTK's notebooks, whose page tabs have no place) is looked into.
        let asked = c
            .get_accessible_at_point(at.0, at.1, CoordType::Screen)
            .await
            .ok()
            .and_then(|r| id_of(&r))
            .filter(|c| *c != node);
        let chain = match asked {
            Some(child) => vec![child],
            None => chain_at(conn, &node, at, CHAIN_DEPTH).await,
        };
        if chain.is_empty() {
            break;
        }
        for child in chain {
            let Ok((role, name)) = role_and_name(conn, &child).await else {
                break;
            };
            let index = match accessible(conn, &child).await {
                Ok(p) => p.get_index_in_parent().await.unwrap_or(0).max(0) as u32,
                Err(_) => 0,
            };
            if let Ok(r) = extents(conn, &child).await
                && r.is_visible()
            {
                rect = r;
            }
            path.push(PathStep { role, name, index });
            node = child;
        }
    }
    let last = path.last().cloned().expect("the window's own level");
    if path.len() == 1 && !rect.contains(at) {
        return Ok(None);
    }
    Ok(Some(Element {
        name: last.name,
        role: last.role,
        window: title.to_string(),
        path,
        rect,
    }))
}

/// How many levels without a place of their own are looked through for a child at a
/// point.
const CHAIN_DEPTH: usize = 3;

/// The way down from `node` to its showing descendant whose place holds `at`: a child
/// there (the smallest, when several are), or through a child with no place of its own
/// (GTK's page tabs) to one of its; empty when none holds it.
fn chain_at<'a>(
    conn: &'a Connection,
    node: &'a ObjectId,
    at: (i32, i32),
    depth: usize,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Vec<ObjectId>> + Send + 'a>> {
    Box::pin(async move {
        let Ok(kids) = children(conn, node).await else {
            return Vec::new();
        };
        let mut best: Option<(i64, ObjectId)> = None;
        let mut placeless = Vec::new();
        for (child, _) in kids {
            match showing_place(conn, &child).await {
                Some(Some(rect)) if rect.contains(at) => {
                    let area = i64::from(rect.width) * i64::from(rect.height);
                    if best.as_ref().is_none_or(|(a, _)| area < *a) {
                        best = Some((area, child));
                    }
                }
                Some(None) => placeless.push(child),
                _ => {}
            }
        }
        if let Some((_, child)) = best {
            return vec![child];
        }
        if depth > 1 {
            for child in placeless {
                let below = chain_at(conn, &child, at, depth - 1).await;
                if !below.is_empty() {
                    let mut chain = vec![child];
                    chain.extend(below);
                    return chain;
                }
            }
        }
        Vec::new()
    })
}

/// How deep below a window its menu bar is looked for.
const MENU_BAR_DEPTH: usize = 4;
/// How many nodes are described looking for it (a window with none is not walked).
const MENU_BAR_SEARCH: usize = 300;

/// The way from `window` to the showing item of an open (selected) menu that holds
/// `at`, through the menu bar; `None` when no open menu holds it.
async fn open_menu_at(
    conn: &Connection,
    window: &ObjectId,
    at: (i32, i32),
) -> Option<Vec<ObjectId>> {
    // The menu bar, breadth first, with the way to it.
    let mut queue: VecDeque<Vec<ObjectId>> = VecDeque::from([vec![]]);
    let mut bar = None;
    let mut described = 0;
    'search: while let Some(way) = queue.pop_front() {
        let node = way.last().unwrap_or(window);
        let kids = children(conn, node).await.ok()?;
        described += kids.len();
        if described > MENU_BAR_SEARCH {
            return None;
        }
        for (child, (role, _)) in kids {
            let mut longer = way.clone();
            longer.push(child);
            if role == "menu bar" {
                bar = Some(longer);
                break 'search;
            }
            if longer.len() < MENU_BAR_DEPTH {
                queue.push_back(longer);
            }
        }
    }
    // The open menus, each the selected menu of the one before (a submenu of a menu).
    let mut open = vec![bar?];
    while open.len() < MAX_DEPTH {
        let last = open.last()?;
        let node = last.last()?;
        let mut selected = None;
        for (child, (role, _)) in children(conn, node).await.ok()? {
            if role == "menu"
                && let Ok(proxy) = accessible(conn, &child).await
                && let Ok(states) = proxy.get_state().await
                && states.contains(State::Selected)
                && states.contains(State::Showing)
            {
                selected = Some(child);
                break;
            }
        }
        let Some(menu) = selected else { break };
        let mut way = last.clone();
        way.push(menu);
        open.push(way);
    }
    // The deepest open menu whose item holds the point (a submenu covers its parent).
    for way in open.iter().skip(1).rev() {
        let menu = way.last()?;
        for (item, _) in children(conn, menu).await.ok()? {
            if let Some(Some(rect)) = showing_place(conn, &item).await
                && rect.contains(at)
            {
                let mut found = way.clone();
                found.push(item);
                return Some(found);
            }
        }
    }
    None
}

/// A showing node's place (`None` inside: it shows but has no place of its own);
/// `None` when it does not show.
async fn showing_place(conn: &Connection, id: &ObjectId) -> Option<Option<Rect>> {
    let proxy = accessible(conn, id).await.ok()?;
    let states = proxy.get_state().await.ok()?;
    if !states.contains(State::Showing) {
        return None;
    }
    Some(extents(conn, id).await.ok().filter(Rect::is_visible))
}

/// The children of `id` that show (at most [`MAX_CHILDREN`]), each with its role and
/// name.
async fn children(
    conn: &Connection,
    id: &ObjectId,
) -> Result<Vec<(ObjectId, (String, String))>, BusError> {
    let proxy = accessible(conn, id).await?;
    let count = proxy.child_count().await.map_err(failed("a child count"))?;
    if !(1..=MAX_CHILDREN).contains(&count) {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for child in proxy.get_children().await.map_err(failed("children"))? {
        let Some(child) = id_of(&child) else { continue };
        // A child that went away meanwhile is left out.
        if let Ok(described) = role_and_name(conn, &child).await {
            out.push((child, described));
        }
    }
    Ok(out)
}

/// Whether a node shows, with a place on the screen.
async fn shows(conn: &Connection, id: &ObjectId) -> Option<Rect> {
    let proxy = accessible(conn, id).await.ok()?;
    let states = proxy.get_state().await.ok()?;
    if !states.contains(State::Showing) {
        return None;
    }
    extents(conn, id).await.ok().filter(Rect::is_visible)
}

/// The element `recorded` names, found in `window` (titled `title`) now: down its
/// recorded path, else (the tree changed) the one showing node of its role and name.
pub(crate) async fn find(
    conn: &Connection,
    window: &ObjectId,
    title: &str,
    recorded: &Element,
    neutral: &crate::desktop::element::Neutral,
) -> Result<Option<Element>, BusError> {
    let found = |rect: Rect| Element {
        window: title.to_string(),
        rect,
        ..recorded.clone()
    };
    // A path that ends elsewhere than on the recorded element's role is not its way.
    let ends_on_it = recorded
        .path
        .last()
        .is_some_and(|s| s.role == recorded.role);
    if ends_on_it
        && let Some(id) = down_the_path(conn, window, &recorded.path, neutral).await?
        && let Some(rect) = shows(conn, &id).await
    {
        return Ok(Some(found(rect)));
    }
    if recorded.name.trim().is_empty() {
        return Ok(None);
    }
    // By role and name, breadth first, bounded; only one may fit.
    let mut queue: VecDeque<(ObjectId, usize)> = VecDeque::from([(window.clone(), 0)]);
    let mut seen = 0;
    let mut fits = Vec::new();
    while let Some((id, depth)) = queue.pop_front() {
        if seen > MAX_NODES || depth > MAX_DEPTH {
            break;
        }
        let kids = children(conn, &id).await?;
        seen += kids.len();
        for (child, (role, name)) in kids {
            if role == recorded.role && neutral(&name).trim() == recorded.name.trim() {
                fits.push(child.clone());
            }
            queue.push_back((child, depth + 1));
        }
    }
    let mut showing = Vec::new();
    for id in fits {
        if let Some(rect) = shows(conn, &id).await {
            showing.push(rect);
        }
    }
    Ok(match showing.as_slice() {
        [one] => Some(found(*one)),
        _ => None,
    })
}

/// The node at the end of `path` below `window` (the path's first level is the
/// window's own), if every level is still there.
async fn down_the_path(
    conn: &Connection,
    window: &ObjectId,
    path: &[PathStep],
    neutral: &crate::desktop::element::Neutral,
) -> Result<Option<ObjectId>, BusError> {
    // The path starts at the window's own level: without it, it names nothing.
    if path.is_empty() {
        return Ok(None);
    }
    let mut node = window.clone();
    for step in path.iter().skip(1) {
        let kids = children(conn, &node).await?;
        let described: Vec<(String, String)> = kids
            .iter()
            .map(|(_, (role, name))| (role.clone(), neutral(name)))
            .collect();
        let Some(i) = pick_child(step, &described) else {
            return Ok(None);
        };
        node = kids[i].0.clone();
    }
    Ok(Some(node))
}

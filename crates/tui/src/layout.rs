//! Where each pane goes. At 120 columns and wider: files | conversation + input |
//! thinking over tools, between a title bar and a status bar. Narrower, the side panes
//! fold away and open over the conversation when asked for.

use ratatui::layout::{Constraint, Direction, Layout, Rect};

use super::app::App;
pub use super::panes::{Areas, Pane, WIDE_COLUMNS};

/// The input's editor never grows past this many rows.
const INPUT_MAX_ROWS: u16 = 8;

fn split(direction: Direction, area: Rect, constraints: &[Constraint]) -> Vec<Rect> {
    Layout::default()
        .direction(direction)
        .constraints(constraints.to_vec())
        .split(area)
        .to_vec()
}

/// Lays out the screen for the app's current state.
pub fn compute(size: Rect, app: &App) -> Areas {
    let narrow = size.width < WIDE_COLUMNS;
    let rows = split(
        Direction::Vertical,
        size,
        &[Constraint::Length(1), Constraint::Min(0), Constraint::Length(1)],
    );
    let (title, body, status) = (rows[0], rows[1], rows[2]);
    let mut panes = Vec::new();

    let input_height = |width: u16| app.input.wanted_height(width.saturating_sub(2), INPUT_MAX_ROWS) + 2;
    let with_input = |panes: &mut Vec<(Pane, Rect)>, pane: Pane, area: Rect| {
        let parts = split(
            Direction::Vertical,
            area,
            &[Constraint::Min(3), Constraint::Length(input_height(area.width))],
        );
        panes.push((pane, parts[0]));
        panes.push((Pane::Input, parts[1]));
    };

    if let Some(pane) = app.layout.maximized() {
        if pane == Pane::Input {
            panes.push((Pane::Input, body));
        } else {
            with_input(&mut panes, pane, body);
        }
        return Areas {
            narrow,
            title,
            status,
            panes,
            plan: None,
        };
    }

    if narrow {
        with_input(&mut panes, Pane::Conversation, body);
        if let Some(side) = app.layout.side_popup() {
            // Over the conversation, leaving the input reachable.
            let conversation = panes[0].1;
            panes.push((side, conversation));
        }
        // Over the top of the conversation, unless a side pane is open over it.
        let plan = (app.plan.visible(true) && app.layout.side_popup().is_none()).then(|| {
            let conversation = panes[0].1;
            Rect {
                height: app
                    .plan
                    .wanted_height(conversation.width)
                    .min(conversation.height),
                ..conversation
            }
        });
        return Areas {
            narrow,
            title,
            status,
            panes,
            plan,
        };
    }

    let show_plan = app.plan.visible(false);
    let show_right = app.layout.side().thinking || app.layout.side().timeline || show_plan;
    let tree_width = if app.layout.side().tree {
        (size.width / 5).clamp(24, 36)
    } else {
        0
    };
    let right_width = if show_right {
        (size.width * 3 / 10).clamp(40, 64)
    } else {
        0
    };
    let columns = split(
        Direction::Horizontal,
        body,
        &[
            Constraint::Length(tree_width),
            Constraint::Min(40),
            Constraint::Length(right_width),
        ],
    );
    if app.layout.side().tree {
        panes.push((Pane::Tree, columns[0]));
    }
    with_input(&mut panes, Pane::Conversation, columns[1]);
    let mut right_column = columns[2];
    let plan = show_plan.then(|| plan_above_tools(app, &mut right_column));
    match (app.layout.side().thinking, app.layout.side().timeline) {
        (true, true) => {
            let right = split(
                Direction::Vertical,
                right_column,
                &[Constraint::Percentage(50), Constraint::Percentage(50)],
            );
            panes.push((Pane::Thinking, right[0]));
            panes.push((Pane::Timeline, right[1]));
        }
        (true, false) => panes.push((Pane::Thinking, right_column)),
        (false, true) => panes.push((Pane::Timeline, right_column)),
        (false, false) => {}
    }
    Areas {
        narrow,
        title,
        status,
        panes,
        plan,
    }
}

/// The plan stands above the tools in the right column: as tall as it needs, at most half
/// the column while a pane shares it. Gives its area; `column` keeps what is left.
fn plan_above_tools(app: &App, column: &mut Rect) -> Rect {
    let alone = !(app.layout.side().thinking || app.layout.side().timeline);
    let most = if alone { column.height } else { column.height / 2 };
    let height = app.plan.wanted_height(column.width).min(most);
    let plan = Rect { height, ..*column };
    column.y += height;
    column.height -= height;
    plan
}

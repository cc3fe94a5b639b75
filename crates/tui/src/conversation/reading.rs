//! Reading the conversation: the search (its line, its matches, `n`/`N`) and the block
//! selected for copying (a reply's code block or a tool call, `[`/`]`).
//!
//! Matches are found in the lines each entry was drawn as, and kept beside that
//! rendering, for the query they were found for: a frame that changes nothing looks at
//! nothing again, a query typed on looks only at the lines that matched the shorter one,
//! and an entry drawn afresh (streamed text, a new width) is searched again alone.

use std::cell::Cell;
use std::ops::Range;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use super::{Cached, Conversation, Entry};
use crate::keys::KeyHint;
use crate::search::{Query, line_text, mark};
use crate::text::wrap;
use crate::theme::Theme;

/// The longest query the search line takes.
const MAX_QUERY_CHARS: usize = 200;

/// One match: the row of the entry's lines, and the bytes of that row's text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Hit {
    row: usize,
    bytes: Range<usize>,
}

/// An entry's matches for `query`, in order.
pub(super) struct Found {
    query: Query,
    hits: Vec<Hit>,
}

/// The search: its query, whether it is being typed, and where it stands.
struct Search {
    query: Query,
    editing: bool,
    /// From the last frame: how many matches, and which one is current (an ordinal).
    count: Cell<usize>,
    current: Cell<Option<usize>>,
    /// The current match is chosen afresh at the next frame (the query changed): the
    /// first one at or below the view's top, else the newest.
    pick: Cell<bool>,
    /// From the last frame: the current match as (entry, its index among the entry's).
    current_at: Cell<Option<(usize, usize)>>,
}

/// What is selected for copying.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Selected {
    entry: usize,
    /// A code block of a reply; `None`: the entry itself (a tool call).
    block: Option<usize>,
}

/// What the selection holds, for a copy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selection {
    /// A code block's code, without its fences.
    Code(String),
    /// A tool call, by its id.
    Tool(String),
}

#[derive(Default)]
pub(super) struct Reading {
    search: Option<Search>,
    selected: Option<Selected>,
    /// What the next frame scrolls into view.
    jump: Cell<Option<Jump>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Jump {
    /// The current match.
    Match,
    /// The selected block.
    Selection,
}

impl Reading {
    pub(super) fn forget_selection(&mut self) {
        self.selected = None;
    }

    /// The search's query, while there is one to look for.
    pub(super) fn query(&self) -> Option<&Query> {
        self.search
            .as_ref()
            .map(|search| &search.query)
            .filter(|query| !query.is_empty())
    }

    /// Whether the pane's last row shows the search line.
    pub(super) fn search_line_shown(&self) -> bool {
        self.search.is_some()
    }

    /// The keys the bottom bar offers while a search or a selection shows.
    pub(super) fn bar_hints(&self) -> Option<Vec<KeyHint>> {
        if let Some(search) = &self.search {
            return Some(if search.editing {
                vec![
                    KeyHint::new("Enter", "keep the search"),
                    KeyHint::new("Esc", "end it"),
                ]
            } else {
                vec![
                    KeyHint::new("n/N", "next / previous match"),
                    KeyHint::new("/", "search again"),
                    KeyHint::new("Esc", "end the search"),
                ]
            });
        }
        self.selected.map(|_| {
            vec![
                KeyHint::new("y", "copy"),
                KeyHint::new("[/]", "previous / next block"),
                KeyHint::new("Esc", "unselect"),
            ]
        })
    }

    /// Brings the matches up to date with the entries as drawn (`heights` rows each,
    /// the view `height` rows from `top`), settles the current match, and says where
    /// the view's top should move to show it or the selection, if it must.
    pub(super) fn settle(
        &self,
        cache: &mut [Option<Cached>],
        heights: &[usize],
        top: usize,
        height: usize,
    ) -> Option<usize> {
        let mut wanted = None;
        if let Some(search) = &self.search {
            let mut count = 0;
            let mut first_below_top = None;
            // Each entry with matches: (entry, its first match's ordinal, its first row).
            let mut with_hits = Vec::new();
            let mut start = 0;
            for (index, (cached, entry_height)) in cache.iter_mut().zip(heights).enumerate() {
                if let Some(cached) = cached {
                    let hits = find(cached, &search.query);
                    if first_below_top.is_none()
                        && let Some(at) = hits.iter().position(|hit| start + hit.row >= top)
                    {
                        first_below_top = Some(count + at);
                    }
                    if !hits.is_empty() {
                        with_hits.push((index, count, start));
                    }
                    count += hits.len();
                }
                start += entry_height;
            }
            search.count.set(count);
            if search.pick.replace(false) {
                search
                    .current
                    .set(first_below_top.or_else(|| count.checked_sub(1)));
                self.jump.set(Some(Jump::Match));
            }
            let current = search.current.get().filter(|&current| current < count);
            search.current.set(current);
            let at = current.and_then(|current| {
                let (index, first, start) = with_hits.iter().rev().find(|(_, first, _)| *first <= current)?;
                let hit = cache[*index]
                    .as_ref()?
                    .found
                    .as_ref()?
                    .hits
                    .get(current - first)?;
                Some((*index, current - first, start + hit.row))
            });
            search.current_at.set(at.map(|(index, nth, _)| (index, nth)));
            if self.jump.get() == Some(Jump::Match) {
                wanted = at.map(|(_, _, row)| (row, row + 1));
            }
        }
        if let Some(selected) = self.selected
            && self.jump.get() == Some(Jump::Selection)
        {
            let start: usize = heights.iter().take(selected.entry).sum();
            wanted = cache
                .get(selected.entry)
                .and_then(Option::as_ref)
                .and_then(|cached| selected_rows(cached, selected))
                .map(|rows| (start + rows.start, start + rows.end));
        }
        self.jump.set(None);
        let (first, end) = wanted?;
        // Already in view: the view stays.
        if first >= top && end <= top + height {
            return None;
        }
        // A third of the way down, or the block's start when it is taller than that.
        let above = (height / 3).min(height.saturating_sub(end - first));
        Some(first.saturating_sub(above))
    }

    /// Row `row` of entry `index`, with the search's matches and the selection marked.
    pub(super) fn decorate(
        &self,
        index: usize,
        cached: &Cached,
        row: usize,
        line: &Line<'static>,
        theme: &Theme,
    ) -> Line<'static> {
        let mut line = match self.selected {
            Some(selected)
                if selected.entry == index
                    && selected_rows(cached, selected).is_some_and(|rows| rows.contains(&row)) =>
            {
                theme.selected(line.clone())
            }
            _ => line.clone(),
        };
        if let (Some(search), Some(found)) = (&self.search, &cached.found) {
            let first = found.hits.partition_point(|hit| hit.row < row);
            let on_row: Vec<Range<usize>> = found.hits[first..]
                .iter()
                .take_while(|hit| hit.row == row)
                .map(|hit| hit.bytes.clone())
                .collect();
            if !on_row.is_empty() {
                let current = self.current_hit(search, index, cached);
                let current = current.filter(|hit| hit.row == row).map(|hit| hit.bytes.clone());
                let style = theme.warning.add_modifier(Modifier::REVERSED);
                let current_style = theme
                    .selection
                    .add_modifier(Modifier::BOLD | Modifier::UNDERLINED);
                line = mark(&line, &on_row, style, current.as_ref(), current_style);
            }
        }
        line
    }

    /// The current match, when it is in entry `index`.
    fn current_hit<'c>(&self, search: &Search, index: usize, cached: &'c Cached) -> Option<&'c Hit> {
        let (entry, nth) = search.current_at.get()?;
        if entry != index {
            return None;
        }
        cached.found.as_ref()?.hits.get(nth)
    }

    /// Draws the search line into `row`: the query (and a cursor while typed), the
    /// count `3/17`.
    pub(super) fn render_search_line(&self, row: Rect, buf: &mut Buffer, theme: &Theme) {
        let Some(search) = &self.search else {
            return;
        };
        buf.set_style(row, theme.status_bar);
        let count = search.count.get();
        let figure = match search.current.get() {
            _ if search.query.is_empty() => String::new(),
            _ if count == 0 => "no match".to_string(),
            Some(current) => format!("{}/{count}", current + 1),
            None => format!("{count}"),
        };
        let figure_width = wrap::display_width(&figure);
        let room = usize::from(row.width).saturating_sub(figure_width + 4);
        let cursor = if search.editing { "▏" } else { "" };
        let query = wrap::truncate(
            &miniagent_text::clean(search.query.text()),
            room.saturating_sub(3),
        );
        let line = Line::from(vec![
            Span::styled(" / ", theme.status_bar.patch(theme.key)),
            Span::styled(query, theme.status_bar),
            Span::styled(cursor, theme.status_bar.patch(theme.accent)),
        ]);
        buf.set_line(row.x, row.y, &line, row.width);
        let x = row.x
            + row
                .width
                .saturating_sub(u16::try_from(figure_width + 1).unwrap_or(u16::MAX));
        let style = if count == 0 && !search.query.is_empty() {
            theme.status_bar.patch(theme.warning)
        } else {
            theme.status_bar.patch(theme.strong)
        };
        buf.set_stringn(x, row.y, &figure, figure_width, style);
    }
}

/// `cached`'s matches of `query`, found again only when it was drawn afresh or the query
/// changed (and then, for a query typed on, only in the rows that matched before).
fn find<'c>(cached: &'c mut Cached, query: &Query) -> &'c [Hit] {
    let fresh = matches!(&cached.found, Some(found) if found.query == *query);
    if !fresh {
        let hits = if query.is_empty() {
            Vec::new()
        } else {
            let lines: Vec<&Line<'static>> = cached.all_lines().collect();
            let rows: Vec<usize> = match &cached.found {
                Some(found) if found.query.narrows_to(query) => {
                    let mut rows: Vec<usize> = found.hits.iter().map(|hit| hit.row).collect();
                    rows.dedup();
                    rows
                }
                _ => (0..lines.len()).collect(),
            };
            rows.into_iter()
                .filter_map(|row| Some((row, lines.get(row)?)))
                .flat_map(|(row, line)| {
                    query
                        .find(&line_text(line))
                        .into_iter()
                        .map(move |bytes| Hit { row, bytes })
                })
                .collect()
        };
        cached.found = Some(Found {
            query: query.clone(),
            hits,
        });
    }
    cached.found.as_ref().map_or(&[], |found| found.hits.as_slice())
}

/// The rows of an entry's lines a selection covers: a code block's, or a tool call's
/// (its line, and the line under it saying how it failed).
fn selected_rows(cached: &Cached, selected: Selected) -> Option<Range<usize>> {
    match selected.block {
        Some(block) => cached.blocks.get(block).map(|block| block.lines.clone()),
        None => Some(0..cached.height()),
    }
}

impl Conversation {
    /// Opens the search line to type a query (again, with the kept one, when a search
    /// is kept).
    pub fn start_search(&mut self) {
        match &mut self.reading.search {
            Some(search) => search.editing = true,
            None => {
                self.reading.search = Some(Search {
                    query: Query::default(),
                    editing: true,
                    count: Cell::new(0),
                    current: Cell::new(None),
                    pick: Cell::new(false),
                    current_at: Cell::new(None),
                })
            }
        }
    }

    /// The pane's keys in the state now, for the bottom bar.
    pub fn bar_hints(&self) -> Vec<KeyHint> {
        self.reading
            .bar_hints()
            .unwrap_or_else(|| self.key_hints()[..3].to_vec())
    }

    /// Whether a query is being typed (the search line has the keys).
    pub fn search_editing(&self) -> bool {
        self.reading.search.as_ref().is_some_and(|search| search.editing)
    }

    /// Whether a search shows (typed or kept).
    pub fn search_active(&self) -> bool {
        self.reading.search.is_some()
    }

    pub fn end_search(&mut self) {
        self.reading.search = None;
    }

    /// The query stops being typed (Enter, or the keys went elsewhere); an empty one
    /// ends the search.
    pub fn keep_search(&mut self) {
        if let Some(search) = self.reading.search.as_mut() {
            search.editing = false;
            if search.query.is_empty() {
                self.end_search();
            }
        }
    }

    /// A key while the query is typed: `None` for a key it leaves to the workbench
    /// (Ctrl-C); any other is the search line's.
    pub fn search_key(&mut self, key: KeyEvent) -> Option<bool> {
        let search = self.reading.search.as_mut()?;
        let mut text = search.query.text().to_string();
        match key.code {
            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => return None,
            KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => text.clear(),
            KeyCode::Char(c)
                if !key
                    .modifiers
                    .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
                    && !c.is_control()
                    && text.chars().count() < MAX_QUERY_CHARS =>
            {
                text.push(c);
            }
            KeyCode::Backspace => {
                text.pop();
            }
            KeyCode::Enter => {
                self.keep_search();
                return Some(true);
            }
            KeyCode::Esc => {
                self.end_search();
                return Some(true);
            }
            _ => return Some(false),
        }
        if text != search.query.text() {
            search.query = Query::new(&text);
            search.pick.set(true);
        }
        Some(true)
    }

    /// A paste while the query is typed: its first line, without escape sequences or
    /// control characters, goes on the query (up to its length limit).
    pub fn search_paste(&mut self, pasted: &str) -> bool {
        let Some(search) = self.reading.search.as_mut() else {
            return false;
        };
        let mut text = search.query.text().to_string();
        let room = MAX_QUERY_CHARS.saturating_sub(text.chars().count());
        // Escape sequences go whole (only dropping their ESC would leave `[2J`).
        let cleaned = miniagent_text::clean(pasted);
        let line = cleaned.lines().next().unwrap_or_default();
        text.extend(line.chars().filter(|c| !c.is_control()).take(room));
        if text != search.query.text() {
            search.query = Query::new(&text);
            search.pick.set(true);
        }
        true
    }

    /// `n` (`forward`) or `N`: the next or previous match becomes current, round the end,
    /// and is scrolled into view. Whether there was one.
    pub fn next_match(&mut self, forward: bool) -> bool {
        let Some(search) = &self.reading.search else {
            return false;
        };
        let count = search.count.get();
        if count == 0 {
            return false;
        }
        let next = match search.current.get() {
            Some(current) if forward => (current + 1) % count,
            Some(current) => (current + count - 1) % count,
            None if forward => 0,
            None => count - 1,
        };
        search.current.set(Some(next));
        self.reading.jump.set(Some(Jump::Match));
        true
    }

    /// What can be selected for copying, in the transcript's order: each tool call, and
    /// each code block of a finished reply.
    fn selectable(&self) -> Vec<Selected> {
        let cache = self.cache.borrow();
        let mut items = Vec::new();
        for (entry, (item, cached)) in self.entries.iter().zip(cache.iter()).enumerate() {
            match item {
                Entry::Tool { .. } => items.push(Selected { entry, block: None }),
                Entry::Assistant { streaming: false, .. } => {
                    let blocks = cached.as_ref().map_or(0, |cached| cached.blocks.len());
                    items.extend((0..blocks).map(|block| Selected {
                        entry,
                        block: Some(block),
                    }));
                }
                Entry::Assistant { .. } | Entry::User(_) | Entry::Notice { .. } | Entry::Files { .. } => {}
            }
        }
        items
    }

    /// `]` (`forward`) or `[`: selects the next or previous code block or tool call, and
    /// scrolls it into view. With nothing selected, `[` starts from the view's bottom
    /// and `]` from its top. Whether the selection moved.
    pub fn select_block(&mut self, forward: bool) -> bool {
        let items = self.selectable();
        let now = self
            .reading
            .selected
            .and_then(|selected| items.iter().position(|item| *item == selected));
        let next = match now {
            Some(at) if forward => (at + 1 < items.len()).then_some(at + 1),
            Some(at) => at.checked_sub(1),
            None => {
                let top = self
                    .top
                    .get()
                    .unwrap_or_else(|| self.total_lines.get().saturating_sub(self.height.get()));
                let starts = self.entry_starts();
                let start_of = |item: &Selected| {
                    let offset = match item.block {
                        Some(block) => self.cache.borrow()[item.entry]
                            .as_ref()
                            .and_then(|cached| cached.blocks.get(block).map(|block| block.lines.start))
                            .unwrap_or(0),
                        None => 0,
                    };
                    starts.get(item.entry).copied().unwrap_or(0) + offset
                };
                if forward {
                    items
                        .iter()
                        .position(|item| start_of(item) >= top)
                        .or((!items.is_empty()).then_some(0))
                } else {
                    let bottom = top + self.height.get();
                    items
                        .iter()
                        .rposition(|item| start_of(item) < bottom)
                        .or(items.len().checked_sub(1))
                }
            }
        };
        let Some(next) = next else {
            return false;
        };
        self.reading.selected = Some(items[next]);
        self.reading.jump.set(Some(Jump::Selection));
        true
    }

    /// The row each entry starts at, as last drawn.
    fn entry_starts(&self) -> Vec<usize> {
        let mut start = 0;
        self.cache
            .borrow()
            .iter()
            .map(|cached| {
                let here = start;
                start += cached.as_ref().map_or(0, Cached::height);
                here
            })
            .collect()
    }

    /// Esc with a block selected: nothing is. Whether something was.
    pub fn unselect(&mut self) -> bool {
        self.reading.selected.take().is_some()
    }

    pub fn has_selection(&self) -> bool {
        self.reading.selected.is_some()
    }

    /// What is selected, to copy.
    pub fn selection(&self) -> Option<Selection> {
        let selected = self.reading.selected?;
        match (self.entries.get(selected.entry)?, selected.block) {
            (Entry::Tool { id, .. }, None) => Some(Selection::Tool(id.clone())),
            (Entry::Assistant { .. }, Some(block)) => {
                let cache = self.cache.borrow();
                let cached = cache.get(selected.entry)?.as_ref()?;
                Some(Selection::Code(cached.blocks.get(block)?.code.clone()))
            }
            _ => None,
        }
    }

    /// The last reply's markdown, for `/copy`.
    pub fn last_answer(&self) -> Option<&str> {
        self.entries.iter().rev().find_map(|entry| match entry {
            Entry::Assistant { text, .. } if !text.trim().is_empty() => Some(text.as_str()),
            _ => None,
        })
    }
}

//! The terminal's lifecycle, paired and guarded: raw mode, the alternate screen,
//! bracketed paste, mouse capture and focus reports are entered in one place and left in
//! one place, by a guard that also runs on early returns and, through the panic hook, on
//! panics.

use std::io::{BufWriter, Stdout, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{
    DisableBracketedPaste, DisableFocusChange, DisableMouseCapture, EnableBracketedPaste, EnableFocusChange,
    EnableMouseCapture, KeyboardEnhancementFlags, PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::execute;
use crossterm::style::{Attribute, SetAttribute};
use crossterm::terminal::{
    Clear, ClearType, EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

/// Whether the terminal is in the workbench's modes (so restoring twice is harmless).
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Whether keyboard enhancement was pushed and must be popped.
static ENHANCED: AtomicBool = AtomicBool::new(false);

/// Room for a whole frame of escape codes and text at large terminal sizes.
const FRAME_BUFFER_BYTES: usize = 256 * 1024;

/// Why the workbench cannot be drawn here, found before anything is written to the
/// terminal (crossterm would otherwise write its set-up sequences into a redirected
/// output and wait seconds for a cursor report that never comes).
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum NoTerminal {
    #[error("the workbench needs a terminal, and standard output is not one (it goes to a file or a pipe)")]
    OutputRedirected,
    #[error("the workbench needs a terminal, and this process has none ({0})")]
    NoTty(String),
    #[error(
        "the workbench needs a terminal that can draw a full screen, and this one says it cannot (TERM=dumb)"
    )]
    Dumb,
}

/// Whether the workbench can run here: standard output is a terminal, keys can be read
/// (from standard input, or the controlling terminal when text is piped in), and `term`
/// (the TERM variable) does not say the terminal cannot address the screen.
pub fn check(term: Option<&str>) -> Result<(), NoTerminal> {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() {
        return Err(NoTerminal::OutputRedirected);
    }
    // crossterm reads keys from /dev/tty when standard input is not a terminal.
    if !std::io::stdin().is_terminal()
        && let Err(err) = std::fs::File::open("/dev/tty")
    {
        return Err(NoTerminal::NoTty(err.to_string()));
    }
    if term.map(str::trim) == Some("dumb") {
        return Err(NoTerminal::Dumb);
    }
    Ok(())
}

/// The terminal in full-screen mode; dropping it restores everything.
pub struct TerminalGuard {
    /// Buffered so that a frame reaches the terminal in one write (standard output on
    /// its own flushes every kilobyte or newline, and terminals may show the pieces).
    pub terminal: Terminal<CrosstermBackend<BufWriter<WhileActive<Stdout>>>>,
}

/// Standard output while the workbench holds the terminal; once the modes are left (on
/// quitting, or by the panic hook before a panic unwinds through the guard), what is
/// still written (a half-built frame flushed as the guard drops, ratatui showing its
/// cursor) is dropped instead of reaching the shell's screen.
pub struct WhileActive<W>(W);

impl<W: Write> Write for WhileActive<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if ACTIVE.load(Ordering::SeqCst) {
            self.0.write(buf)
        } else {
            Ok(buf.len())
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if ACTIVE.load(Ordering::SeqCst) {
            self.0.flush()
        } else {
            Ok(())
        }
    }
}

impl TerminalGuard {
    pub fn enter() -> std::io::Result<TerminalGuard> {
        install_panic_hook();
        enter_modes()?;
        let backend = CrosstermBackend::new(BufWriter::with_capacity(
            FRAME_BUFFER_BYTES,
            WhileActive(std::io::stdout()),
        ));
        let terminal = match Terminal::new(backend) {
            Ok(terminal) => terminal,
            Err(err) => {
                restore();
                return Err(err);
            }
        };
        let mut guard = TerminalGuard { terminal };
        guard.terminal.hide_cursor()?;
        guard.terminal.clear()?;
        Ok(guard)
    }

    /// Hands the terminal to another program (Ctrl-G's editor): every mode is left as on
    /// quitting, and nothing is drawn until [`Self::resume`].
    pub fn suspend(&mut self) {
        let _ = self.terminal.backend_mut().flush();
        restore();
    }

    /// Takes the terminal back after [`Self::suspend`]: the modes entered again and the
    /// next frame drawn whole (the other program drew over everything).
    pub fn resume(&mut self) -> std::io::Result<()> {
        enter_modes()?;
        self.terminal.hide_cursor()?;
        self.terminal.clear()
    }
}

/// Raw mode, the alternate screen, bracketed paste, mouse capture, focus reports, and
/// the keyboard enhancement where the terminal has it; on a failure, what was entered
/// is left again.
fn enter_modes() -> std::io::Result<()> {
    enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    let mut stdout = std::io::stdout();
    let entered = execute!(
        stdout,
        EnterAlternateScreen,
        EnableBracketedPaste,
        EnableMouseCapture,
        EnableFocusChange
    );
    if let Err(err) = entered {
        restore();
        return Err(err);
    }
    // Lets terminals that can tell Shift-Enter from Enter say so; others ignore it.
    if crossterm::terminal::supports_keyboard_enhancement().unwrap_or(false)
        && execute!(
            stdout,
            PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
        )
        .is_ok()
    {
        ENHANCED.store(true, Ordering::SeqCst);
    }
    Ok(())
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        // Whatever a failed frame left in the buffer goes out before the modes are left,
        // not after.
        let _ = self.terminal.backend_mut().flush();
        restore();
    }
}

/// Writes an escape sequence the workbench built (an OSC 52 copy) to the terminal,
/// between frames; nothing while the workbench does not hold the terminal.
pub fn write_sequence(sequence: &str) -> std::io::Result<()> {
    if !ACTIVE.load(Ordering::SeqCst) {
        return Ok(());
    }
    let mut stdout = std::io::stdout();
    stdout.write_all(sequence.as_bytes())?;
    stdout.flush()
}

/// Turns mouse capture on or off (`/mouse`); `restore` turns it off in any case.
pub fn set_mouse_capture(on: bool) -> std::io::Result<()> {
    if !ACTIVE.load(Ordering::SeqCst) {
        return Ok(());
    }
    let mut stdout = std::io::stdout();
    if on {
        execute!(stdout, EnableMouseCapture)
    } else {
        execute!(stdout, DisableMouseCapture)
    }
}

/// Leaves every mode the workbench entered; safe to call more than once.
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut stdout = std::io::stdout();
    if ENHANCED.swap(false, Ordering::SeqCst) {
        let _ = execute!(stdout, PopKeyboardEnhancementFlags);
    }
    let _ = execute!(
        stdout,
        DisableFocusChange,
        DisableMouseCapture,
        DisableBracketedPaste,
        // The alternate screen is emptied before it is left: tmux 3.3 rewraps it to the
        // size it had on entry as it leaves it, and after the window grew, rows wider
        // than that spilled into the shell's screen. Nothing of it is kept anyway.
        SetAttribute(Attribute::Reset),
        Clear(ClearType::All),
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
    let _ = disable_raw_mode();
    let _ = stdout.flush();
}

/// The thread that draws: a panic there ends the workbench.
static UI_THREAD: std::sync::OnceLock<std::thread::ThreadId> = std::sync::OnceLock::new();

fn install_panic_hook() {
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    let _ = UI_THREAD.set(std::thread::current().id());
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if ends_the_workbench(std::thread::current().id()) {
            // Put the terminal back first, so the panic message is readable and the shell usable.
            restore();
            previous(info);
        } else {
            // A task on another thread (the agent's turn, a tool) panicked: tokio catches it
            // and the agent repairs the session, while the workbench goes on drawing. Its
            // message goes to the log, not over the screen.
            tracing::error!("a background task panicked: {info}");
            if !ACTIVE.load(Ordering::SeqCst) {
                previous(info);
            }
        }
    }));
}

/// Whether a panic on `thread` unwinds through the workbench itself.
fn ends_the_workbench(thread: std::thread::ThreadId) -> bool {
    UI_THREAD.get().is_none_or(|ui| *ui == thread)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_panic_on_the_drawing_thread_restores_the_terminal() {
        let _ = UI_THREAD.set(std::thread::current().id());
        let ui = *UI_THREAD.get().expect("set");
        assert!(ends_the_workbench(ui));
        let worker = std::thread::spawn(|| std::thread::current().id())
            .join()
            .expect("the thread ran");
        assert!(
            !ends_the_workbench(worker),
            "a worker's panic leaves the screen alone"
        );
    }

    /// Once the modes are left, the frame writer takes bytes and sends none on.
    #[test]
    fn nothing_is_written_once_the_terminal_is_restored() {
        restore();
        let mut out = BufWriter::new(WhileActive(Vec::new()));
        out.write_all(b"\x1b[2J half a frame").expect("taken");
        out.flush().expect("flushed");
        let inner = out.into_inner().map_err(|err| err.to_string()).expect("flushed");
        assert_eq!(inner.0, Vec::<u8>::new());
    }
}

//! The workbench on a pseudo-terminal, watched like a person's terminal would show it:
//! every read is timestamped, escape sequences are stripped into a searchable text, and
//! the two queries crossterm sends (primary device attributes, cursor position) are
//! answered the way a terminal answers them.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// What the terminal has shown so far.
#[derive(Default)]
pub struct Screen {
    /// The output with escape sequences removed: printed text only.
    pub text: Vec<u8>,
    /// Every read: when it arrived, how many raw bytes, and `text`'s length after it.
    pub reads: Vec<(Instant, usize, usize)>,
    closed: bool,
    parser: Strip,
}

/// A tiny state machine that drops CSI, OSC and two-byte escape sequences and reports
/// the CSI queries that need an answer.
#[derive(Clone, Copy, Default)]
enum Strip {
    #[default]
    Text,
    Escape,
    Csi {
        question: bool,
        digits: u32,
    },
    Osc,
    OscEscape,
}

impl Screen {
    /// Adds raw bytes; returns the answers the terminal owes for queries among them.
    fn feed(&mut self, bytes: &[u8]) -> Vec<u8> {
        let mut answers = Vec::new();
        for &byte in bytes {
            self.parser = match (self.parser, byte) {
                (Strip::Text, 0x1b) => Strip::Escape,
                (Strip::Text, b) => {
                    if b >= 0x20 || b == b'\n' {
                        self.text.push(b);
                    }
                    Strip::Text
                }
                (Strip::Escape, b'[') => Strip::Csi {
                    question: false,
                    digits: 0,
                },
                (Strip::Escape, b']') => Strip::Osc,
                (Strip::Escape, _) => Strip::Text,
                (Strip::Csi { digits, .. }, b'?') => Strip::Csi {
                    question: true,
                    digits,
                },
                (Strip::Csi { question, digits }, b'0'..=b'9') => Strip::Csi {
                    question,
                    digits: digits.saturating_mul(10).saturating_add(u32::from(byte - b'0')),
                },
                (Strip::Csi { question, digits }, 0x40..=0x7e) => {
                    match (question, digits, byte) {
                        // Primary device attributes: a VT220-class terminal.
                        (false, 0, b'c') => answers.extend_from_slice(b"\x1b[?62;22c"),
                        // Cursor position report.
                        (false, 6, b'n') => answers.extend_from_slice(b"\x1b[1;1R"),
                        _ => {}
                    }
                    Strip::Text
                }
                (csi @ Strip::Csi { .. }, _) => csi,
                (Strip::Osc, 0x07) => Strip::Text,
                (Strip::Osc, 0x1b) => Strip::OscEscape,
                (Strip::Osc, _) => Strip::Osc,
                (Strip::OscEscape, _) => Strip::Text,
            };
        }
        answers
    }

    /// Whether `needle` occurs in the text from byte `from` on; the read that completed
    /// it (its arrival time) and the text's length after that read.
    pub fn find(&self, needle: &[u8], from: usize) -> Option<(Instant, usize)> {
        let from = from.min(self.text.len());
        let at = self.text[from..]
            .windows(needle.len())
            .position(|w| w == needle)?
            + from
            + needle.len();
        self.reads
            .iter()
            .find(|(_, _, end)| *end >= at)
            .map(|(when, _, end)| (*when, *end))
    }

    /// Raw bytes and reads that arrived after `since`.
    pub fn output_since(&self, since: Instant) -> (usize, usize) {
        self.reads
            .iter()
            .filter(|(when, _, _)| *when > since)
            .fold((0, 0), |(bytes, reads), (_, n, _)| (bytes + n, reads + 1))
    }
}

/// A process on the slave side of a pseudo-terminal.
pub struct Pty {
    master: File,
    pub child: Child,
    screen: Arc<(Mutex<Screen>, Condvar)>,
}

fn lock(screen: &Mutex<Screen>) -> MutexGuard<'_, Screen> {
    screen.lock().unwrap_or_else(|e| e.into_inner())
}

impl Pty {
    /// Starts `command` as the session leader of a new `cols`×`rows` terminal.
    pub fn spawn(mut command: Command, cols: u16, rows: u16) -> Pty {
        let mut master_fd = -1;
        let mut slave_fd = -1;
        let size = libc::winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: the out-pointers are valid; name and termios may be null.
        let opened = unsafe {
            libc::openpty(
                &mut master_fd,
                &mut slave_fd,
                std::ptr::null_mut(),
                std::ptr::null(),
                &size,
            )
        };
        assert_eq!(opened, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: openpty returned two fresh descriptors this process now owns.
        let (master, slave) = unsafe { (File::from_raw_fd(master_fd), OwnedFd::from_raw_fd(slave_fd)) };
        let io = |fd: &OwnedFd| Stdio::from(fd.try_clone().expect("dup the pty slave"));
        command.stdin(io(&slave)).stdout(io(&slave)).stderr(io(&slave));
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().expect("the workbench starts");
        drop(slave);
        let screen: Arc<(Mutex<Screen>, Condvar)> = Arc::default();
        let mut reader = master.try_clone().expect("dup the pty master");
        let mut answerer = master.try_clone().expect("dup the pty master");
        let shared = screen.clone();
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 1 << 16];
            loop {
                let n = match reader.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                let now = Instant::now();
                let answers = {
                    let mut screen = lock(&shared.0);
                    let answers = screen.feed(&buf[..n]);
                    let end = screen.text.len();
                    screen.reads.push((now, n, end));
                    answers
                };
                if !answers.is_empty() {
                    let _ = answerer.write_all(&answers);
                }
                shared.1.notify_all();
            }
            lock(&shared.0).closed = true;
            shared.1.notify_all();
        });
        Pty {
            master,
            child,
            screen,
        }
    }

    pub fn screen(&self) -> MutexGuard<'_, Screen> {
        lock(&self.screen.0)
    }

    /// Waits until `needle` shows in the text after byte `from`; the arrival time of the
    /// read that completed it and the text's length then.
    pub fn wait_for(&self, needle: &str, from: usize, timeout: Duration) -> Option<(Instant, usize)> {
        let deadline = Instant::now() + timeout;
        let mut screen = self.screen();
        loop {
            if let Some(found) = screen.find(needle.as_bytes(), from) {
                return Some(found);
            }
            let left = deadline.checked_duration_since(Instant::now())?;
            if screen.closed {
                return None;
            }
            screen = self
                .screen
                .1
                .wait_timeout(screen, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Types `bytes` as keys.
    pub fn send(&mut self, bytes: &[u8]) {
        self.master.write_all(bytes).expect("write to the pty");
    }

    /// CPU time the process has used so far: the sum over its live threads of the time
    /// the scheduler ran them (nanosecond resolution), and the kernel's total including
    /// threads that ended (10 ms resolution).
    pub fn cpu(&self) -> (Duration, Duration) {
        let pid = self.child.id();
        let mut live = 0u64;
        if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
            for task in tasks.flatten() {
                let stat = std::fs::read_to_string(task.path().join("schedstat")).unwrap_or_default();
                live += stat
                    .split_whitespace()
                    .next()
                    .and_then(|ns| ns.parse::<u64>().ok())
                    .unwrap_or(0);
            }
        }
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // Fields after the command name, which is in parentheses and may hold spaces.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest.split_whitespace().collect())
            .unwrap_or_default();
        let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        // utime and stime are fields 14 and 15 of the whole line: 11 and 12 after the name.
        // SAFETY: sysconf has no preconditions.
        let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
        let total = Duration::from_nanos((ticks(11) + ticks(12)) * 1_000_000_000 / per_second);
        (Duration::from_nanos(live), total)
    }

    /// Peak resident memory (VmHWM) in kB.
    pub fn peak_rss_kb(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        status
            .lines()
            .find(|l| l.starts_with("VmHWM:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    }

    /// Ends the process (asks first with Ctrl-C twice, then kills) and reaps it.
    pub fn finish(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        let _ = self.master.write_all(b"\x03");
        std::thread::sleep(Duration::from_millis(50));
        let _ = self.master.write_all(b"\x03");
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A benchmark that fails half-way leaves no workbench running.
impl Drop for Pty {
    fn drop(&mut self) {
        self.stop();
    }
}

//! `miniagent-supervise`: the supervisor every command runs under
//! (`miniagent_core::tools::supervisor`), as a small binary of its own. miniagent runs
//! it from beside itself when it is there; a fresh image of the whole miniagent binary
//! for every command cost about 2.5 ms of CPU more (its ~38,000 relocations and ~300
//! page faults), a tenth of a 30-step task's CPU.

fn main() {
    match miniagent::tools::supervisor::run_if_requested() {
        Some(code) => std::process::exit(code),
        None => {
            eprintln!("miniagent-supervise: miniagent runs this for each command; it is not run by hand");
            std::process::exit(2);
        }
    }
}

//! `miniagent-supervise`: the supervisor every command runs under (the core's, reached
//! through `miniagent_api::supervise_if_asked`), as a small binary of its own. miniagent runs
//! it from beside itself when it is there; a fresh image of the whole miniagent binary
//! for every command ran three times the instructions (relocating its ~38,000
//! pointers) and took nearly three times the page faults.

fn main() {
    match miniagent_api::supervise_if_asked() {
        Some(code) => std::process::exit(code),
        None => {
            eprintln!("miniagent-supervise: miniagent runs this for each command; it is not run by hand");
            std::process::exit(2);
        }
    }
}

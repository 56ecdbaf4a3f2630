//! `fedtopo`: the command-line front end (a thin layer over the library).

mod cli;

fn main() {
    if let Err(err) = cli::run() {
        eprintln!("error: {}", cli::error_text(&err));
        std::process::exit(2);
    }
}

//! `fedtopo`: the command-line front end (a thin layer over the library).

mod cli;

fn main() {
    if let Err(err) = cli::run() {
        eprintln!("error: {err:#}");
        std::process::exit(2);
    }
}

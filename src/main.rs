//! `fedtopo`: the command-line front end (a thin layer over the library).

mod cli;

fn main() {
    if let Err(err) = cli::run() {
        // A reader that closed its pipe stopped reading on purpose: exit
        // quietly, non-zero (src/cli/output.rs).
        if err
            .downcast_ref::<cli::StdoutError>()
            .is_some_and(cli::StdoutError::is_broken_pipe)
        {
            std::process::exit(cli::BROKEN_PIPE_EXIT);
        }
        eprintln!("error: {}", cli::error_text(&err));
        std::process::exit(2);
    }
}
